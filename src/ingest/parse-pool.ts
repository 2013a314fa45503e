/**
 * Parsing off the main thread: a small pool of worker threads that read messages (parse, new text,
 * caps; see read-message.ts) for ingestion. A synchronous CPU loop cannot be interrupted from the
 * same thread, so a message that takes longer than `timeoutMs` has its worker terminated (and
 * replaced) and comes back as unparseable with the reason; a worker's V8 heap is capped with
 * `resourceLimits`, so an allocation bomb kills that worker, not the process. Meanwhile the main
 * thread keeps serving the console, renewing the poller's lease and talking to the database.
 *
 * Falls back to parsing in-process, logged once, only when no worker can start at all.
 */
import type { Logger } from '../logger.ts';
import type { ParseOutcome } from '../mail/parse-message.ts';
import { readHeaders, readMessage, type AttachmentFileLimits, type ReadMessage } from './read-message.ts';
import { WorkerPool, type PoolJobs, type PoolReply } from './worker-pool.ts';

export interface ParseSettings {
  /** Worker threads; 0 parses on the main thread (no time or memory bound then). */
  workers: number;
  /** A message taking longer than this is given up: its worker is terminated and replaced. */
  timeoutMs: number;
  /** Each worker's V8 heap limit in MB (strings, objects; Buffers are outside it). */
  memoryMb: number;
}

export const DEFAULT_PARSE_SETTINGS: ParseSettings = { workers: 1, timeoutMs: 30_000, memoryMb: 512 };

/** How ingestion reads messages: through the pool, or in-process (tests, the fallback). */
export interface MessageReader {
  /**
   * Never rejects: a message that cannot be read comes back as `{ ok: false, reason }`. With
   * `files`, the bytes of attachments whose text may be read are kept (`email.attachmentFiles`).
   */
  read(raw: Buffer, files?: AttachmentFileLimits): Promise<ReadMessage>;
  /** The header section only, for a message too large to parse. Never rejects. */
  readHeaders(head: Buffer): Promise<ParseOutcome>;
}

/** Reads on the calling thread: no time or memory bound. */
const inProcessReader: MessageReader = { read: readMessage, readHeaders };

/** Sent to a worker. `raw` is a copy whose buffer is transferred, never a view into a larger one. */
export interface WorkerRequest {
  id: number;
  kind: 'message' | 'headers';
  raw: Uint8Array;
  files?: AttachmentFileLimits;
}

export type WorkerReply = PoolReply;

interface Job {
  kind: WorkerRequest['kind'];
  raw: Buffer;
  files?: AttachmentFileLimits;
}

const ENTRY = new URL('./parse-worker.mjs', import.meta.url);

/** The parse pool's side of the worker protocol (worker-pool.ts). */
function parseJobs(settings: ParseSettings): PoolJobs<Job, ReadMessage> {
  return {
    name: 'parse',
    request(job, id) {
      const copy = new Uint8Array(job.raw.length);
      copy.set(job.raw);
      const message: WorkerRequest = { id, kind: job.kind, raw: copy, ...(job.files ? { files: job.files } : {}) };
      return { message, transfer: [copy.buffer] };
    },
    failure(_job, failure) {
      switch (failure.kind) {
        case 'timeout':
          return failed(`parsing took longer than ${settings.timeoutMs} ms; the parse worker was stopped`);
        case 'out-of-memory':
          return failed(`parsing needed more than ${settings.memoryMb} MB of memory; the parse worker was stopped`);
        case 'crashed':
          return failed(`the parse worker failed: ${failure.message}`);
        case 'closed':
          return failed('the parse pool was closed while reading this message');
      }
    },
    fallback: (job) => readInProcess(job.kind, job.raw, job.files),
    // The parse worker is ours and answers a ReadMessage (parse-worker-main.ts).
    reply: (result) => result as ReadMessage,
  };
}

export class ParsePool implements MessageReader {
  private readonly pool: WorkerPool<Job, ReadMessage>;

  constructor(
    settings: ParseSettings,
    logger: Logger,
    /** The worker's entry module; tests swap in workers that hang, crash or exhaust memory. */
    entry: URL = ENTRY,
  ) {
    this.pool = new WorkerPool(settings, parseJobs(settings), logger, entry);
  }

  read(raw: Buffer, files?: AttachmentFileLimits): Promise<ReadMessage> {
    return this.pool.run({ kind: 'message', raw, ...(files ? { files } : {}) });
  }

  async readHeaders(head: Buffer): Promise<ParseOutcome> {
    return (await this.pool.run({ kind: 'headers', raw: head })).parsed;
  }

  /** Workers alive now (for tests and the health view). */
  get size(): number {
    return this.pool.size;
  }

  /** True once no worker could start and reading went in-process. */
  get inProcess(): boolean {
    return this.pool.inProcess;
  }

  /** Terminates the workers; messages still waiting are read in-process. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

function failed(reason: string): ReadMessage {
  return { parsed: { ok: false, reason }, text: '' };
}

async function readInProcess(kind: WorkerRequest['kind'], raw: Buffer, files?: AttachmentFileLimits): Promise<ReadMessage> {
  if (kind === 'headers') return { parsed: await readHeaders(raw), text: '' };
  return readMessage(raw, files);
}

const shared = new Map<string, ParsePool>();

/**
 * One pool per process and settings, started on first use. Its idle workers never keep the process
 * alive, so nothing has to close it.
 */
export function sharedParsePool(settings: ParseSettings, logger: Logger): MessageReader {
  if (settings.workers <= 0) return inProcessReader;
  const key = `${settings.workers}:${settings.timeoutMs}:${settings.memoryMb}`;
  let pool = shared.get(key);
  if (!pool) {
    pool = new ParsePool(settings, logger);
    shared.set(key, pool);
  }
  return pool;
}
