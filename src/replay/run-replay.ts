/**
 * Replays .eml files through the whole pipeline in-process, on a fresh embedded database and
 * without Redis, in Date order. The very same transitions as the workers run (src/app/pipeline.ts),
 * on the inline virtual-clock scheduler: a message's turn runs at its arrival time, a thread's
 * promotion when it has gone quiet on that clock, and the reconciler's periodic housekeeping
 * (rebuilding due work, sweeping expired facts) whenever the clock moves on. Failures are
 * recorded in the report and handled as the workers handle a last failed attempt; the replay
 * goes on and always ends with a report.
 */
import { importKnowledge } from '../app/import-knowledge.ts';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { openRuntime } from '../app/runtime.ts';
import { VirtualScheduler, virtualClock } from '../app/virtual-scheduler.ts';
import type { Config } from '../config.ts';
import { AppError, describeError } from '../errors.ts';
import { DEFAULT_MAX_MESSAGE_BYTES, ingestRawMessage, TOO_LARGE_KEEP_BYTES } from '../ingest/ingest-message.ts';
import { withCircuitBreaker } from '../llm/circuit-breaker.ts';
import { createProvider } from '../llm/create-provider.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import { openDatabase, openMemoryDatabase, type Database } from '../store/database.ts';
import { threadsNeedingPromotion } from '../store/promotions.ts';
import { loadReplaySections } from '../store/replay-sections.ts';
import { collectReplayFiles } from './replay-files.ts';
import type { ReplayFailure, ReplayReport } from './replay-report.ts';
import { skippedAttachments } from '../store/attachment-skips.ts';

export interface ReplayOptions {
  inputs: readonly string[];
  /** The support mailbox's address (the agent's own). */
  address: string;
  config: Config;
  logger: Logger;
  /** The model; the configured one by default (wrapped in a circuit breaker either way). */
  provider?: LlmProvider;
  progress?: (done: number, total: number) => void;
  /** Called once the input is read and the database is open, before the first mail (the command names its model then). */
  started?: () => void;
  /** Called with the replay's database before it is closed (for tests and tools). */
  inspect?: (db: Database) => Promise<void>;
  /**
   * Keep the embedded database in this folder (new or empty: one that already holds a database is
   * refused), so the operator commands can inspect it afterwards. In memory when absent.
   */
  dataDir?: string;
  /** Knowledge-base files or folders imported into the replay's database before the mail (`--kb`). */
  knowledge?: readonly string[];
  /**
   * Run the virtual clock on to QUIET_AFTER past the last mail, so due promotions, expiry and
   * overdue sweeps happen as in production (default). False stops at the last mail and promotes
   * what is still waiting at once (trigger `replay-end`).
   */
  settle?: boolean;
}

export async function runReplay(options: ReplayOptions): Promise<ReplayReport> {
  const files = await collectReplayFiles(options.inputs);
  if (files.length === 0) throw new AppError('INPUT_INVALID', `no .eml files found in ${options.inputs.join(', ')}`);

  const clock = virtualClock(files.find((f) => f.date)?.date ?? new Date(0));
  const database = options.dataDir
    ? await openDatabase({ databaseUrl: undefined, dataDir: path.resolve(options.dataDir), existing: 'refuse' })
    : await openMemoryDatabase();
  const runtime = await openRuntime(options.config, options.logger, {
    database,
    supportAddress: options.address,
    now: clock.now,
    provider: withCircuitBreaker(options.provider ?? createProvider(options.config.llm, options.logger)),
    offline: true,
  });
  options.started?.();
  try {
    const failures: ReplayFailure[] = [];
    let currentFile: string | null = null;
    const record = (failure: Omit<ReplayFailure, 'file'>) =>
      failures.push({ file: currentFile, ...failure, error: failure.error.slice(0, 500) });
    if (options.knowledge && options.knowledge.length > 0) {
      const imported = await importKnowledge(runtime.db, options.knowledge, runtime.kbImportOptions(), clock.now());
      for (const skipped of imported.skipped)
        record({ threadId: null, stage: 'read', error: `knowledge ${skipped.source}: ${skipped.reason}` });
    }
    const scheduler = new VirtualScheduler(clock, record);
    const pipeline = runtime.pipeline(scheduler);
    const ingestDeps = runtime.ingestDeps({ pipeline, logger: options.logger });
    /** The workers' periodic reconcile, on the virtual clock: due promotions scheduled, expired facts swept. */
    const housekeeping = async () => {
      await pipeline
        .reconcile()
        .catch((error: unknown) => record({ threadId: null, stage: 'promotion', error: `housekeeping: ${describeError(error)}` }));
      await scheduler.runUntil(clock.now(), pipeline);
    };

    const messages: ReplayReport['messages'] = [];
    for (const [index, file] of files.entries()) {
      currentFile = path.basename(file.path);
      if (file.date && file.date > clock.now()) {
        await scheduler.runUntil(file.date, pipeline);
        await housekeeping();
      }
      const read = await readBounded(file.path, runtime.ingest.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES).catch(
        (error: NodeJS.ErrnoException) => {
          record({ threadId: null, stage: 'read', error: `cannot read (${error.code ?? 'error'})` });
          return null;
        },
      );
      const at = clock.now();
      const result = read
        ? await ingestRawMessage(
            ingestDeps,
            read.raw,
            { kind: 'replay', file: file.path },
            { receivedAt: at, now: at, totalBytes: read.totalBytes },
          ).catch((error: unknown) => {
            record({ threadId: null, stage: 'ingest', error: describeError(error) });
            return null;
          })
        : null;
      if (result) {
        messages.push({
          file: currentFile,
          messageId: result.messageId,
          threadId: result.threadId,
          entityId: result.entityId,
          outcome: result.outcome,
          skipReason: result.skipReason,
          text: result.text,
        });
      }
      await scheduler.runUntil(clock.now(), pipeline);
      options.progress?.(index + 1, files.length);
    }
    currentFile = null;
    await housekeeping();
    if (options.settle ?? true) {
      // Time goes on after the last mail as it would in production: threads go quiet and are
      // promoted, short-lived facts expire, promises fall due.
      await scheduler.runUntil(new Date(clock.now().getTime() + options.config.memory.quietAfterMs + 1), pipeline);
      await housekeeping();
    }
    // Threads still waiting (not settled, or a pass failed) are promoted now, so the report
    // shows what they would add to the profiles.
    for (const thread of await threadsNeedingPromotion(runtime.db, runtime.mailbox.id)) {
      await pipeline.runPromotion(thread.id, 'replay-end').catch(async (error: unknown) => {
        record({ threadId: thread.id, stage: 'promotion', error: describeError(error) });
        await pipeline.promotionFailed(thread.id, describeError(error));
      });
    }
    const report: ReplayReport = {
      messages,
      ...(await loadReplaySections(runtime.db, runtime.mailbox.id)),
      skippedAttachments: await skippedAttachments(runtime.db, runtime.mailbox.id),
      failures,
      clock: { endedAt: clock.now().toISOString(), settled: options.settle ?? true },
    };
    await options.inspect?.(runtime.database);
    return report;
  } finally {
    await runtime.close();
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
