/**
 * Replays .eml files through the whole pipeline in-process, on a fresh embedded database and
 * without Redis, in Date order, with a virtual clock taken from those dates.
 */
import { open } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { openMemoryDatabase, type Database } from '../store/database.ts';
import { ensureMailbox, type MailboxRecord } from '../store/mailboxes.ts';
import { applyMigrations } from '../store/migrator.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, ingestRawMessage, TOO_LARGE_KEEP_BYTES, type IngestResult, type IngestSettings } from './ingest-message.ts';
import { collectReplayFiles } from './replay-files.ts';
import { buildStoredSections, type ReplayReport } from './replay-report.ts';

/** What runs after ingestion in a replay: replies and promotion plug in here. */
export interface ReplayStages {
  /** A customer message needing a reply was stored at virtual time `clock`. */
  onReplyNeeded(threadId: string, result: IngestResult, clock: Date): Promise<void>;
  /** The virtual clock moved to `clock` (before the next message is ingested). */
  onClockAdvanced(clock: Date): Promise<void>;
  /** Every file is in; `clock` is the last message's time. */
  onFinished(clock: Date): Promise<void>;
}

export interface ReplayContext {
  db: Database;
  mailbox: MailboxRecord;
  settings: IngestSettings;
  logger: Logger;
}

export interface ReplayOptions {
  inputs: readonly string[];
  /** The support mailbox's address (the agent's own). */
  address: string;
  settings: (db: Database) => Promise<IngestSettings>;
  stages?: (context: ReplayContext) => ReplayStages | Promise<ReplayStages>;
  logger: Logger;
  progress?: (done: number, total: number) => void;
  /** Called with the replay's database before it is thrown away (for tests and tools). */
  inspect?: (db: Database) => Promise<void>;
}

const NO_STAGES: ReplayStages = {
  onReplyNeeded: async () => {},
  onClockAdvanced: async () => {},
  onFinished: async () => {},
};

export async function runReplay(options: ReplayOptions): Promise<ReplayReport> {
  const files = await collectReplayFiles(options.inputs);
  if (files.length === 0) throw new AppError('INPUT_INVALID', `no .eml files found in ${options.inputs.join(', ')}`);

  const db = await openMemoryDatabase();
  try {
    await applyMigrations(db.adapterFactory);
    const mailbox = await ensureMailbox(db.prisma, options.address);
    const settings = { ...(await options.settings(db)), supportAddress: options.address };
    const context: ReplayContext = { db, mailbox, settings, logger: options.logger };
    const stages = options.stages ? await options.stages(context) : NO_STAGES;

    const messages: ReplayReport['messages'] = [];
    let clock = files.find((f) => f.date)?.date ?? new Date(0);
    for (const [index, file] of files.entries()) {
      if (file.date && file.date > clock) {
        clock = file.date;
        await stages.onClockAdvanced(clock);
      }
      const { raw, totalBytes } = await readBounded(file.path, settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES).catch((error: NodeJS.ErrnoException) => {
        throw new AppError('INPUT_INVALID', `${file.path}: cannot read (${error.code ?? 'error'})`);
      });
      const at = clock;
      const result = await ingestRawMessage(
        {
          sql: db.sql,
          mailbox,
          settings,
          logger: options.logger,
          onReplyNeeded: (threadId, ingested) => stages.onReplyNeeded(threadId, ingested, at),
        },
        raw,
        { kind: 'replay', file: file.path },
        { receivedAt: at, now: at, totalBytes },
      );
      messages.push({
        file: path.basename(file.path),
        messageId: result.messageId,
        threadId: result.threadId,
        entityId: result.entityId,
        outcome: result.outcome,
        skipReason: result.skipReason,
        text: result.text,
      });
      options.progress?.(index + 1, files.length);
    }
    await stages.onFinished(clock);
    const report = { messages, ...(await buildStoredSections(db.prisma, mailbox.id)) };
    await options.inspect?.(db);
    return report;
  } finally {
    await db.close();
  }
}

/** A file's bytes, or only its start when it is over the size cap (ingestion keeps no more of it). */
async function readBounded(file: string, maxBytes: number): Promise<{ raw: Buffer; totalBytes: number }> {
  const handle = await open(file, 'r');
  try {
    const totalBytes = (await handle.stat()).size;
    const length = totalBytes > maxBytes ? Math.min(totalBytes, TOO_LARGE_KEEP_BYTES) : totalBytes;
    const raw = Buffer.alloc(length);
    let offset = 0;
    while (offset < length) {
      const { bytesRead } = await handle.read(raw, offset, length - offset, offset);
      if (bytesRead === 0) break;
      offset += bytesRead;
    }
    return { raw: raw.subarray(0, offset), totalBytes };
  } finally {
    await handle.close();
  }
}
