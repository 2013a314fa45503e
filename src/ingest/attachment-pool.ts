/**
 * The warm attachment readers: a small pool of worker threads (worker-pool.ts, the parse pool's own
 * machinery) that read attachments' text (attachment-reader.ts), kept alive between files so a
 * mail with attachments costs reading time, not a worker start (about 100 ms each). Files of
 * different messages are read side by side, up to `workers` at once.
 *
 * A file is untrusted input: its worker's V8 heap is capped (`memoryMb`), its ArrayBuffers are
 * bounded by the readers themselves (the ZIP's inflated bytes, the PDF's decoded bytes), and a
 * reading that runs past `timeoutMs` has its worker terminated. A worker that dies, runs out of
 * memory or out of time costs that file only: it comes back as `{ ok: false, reason }` (recorded as
 * "skipped, because …"), the worker is replaced once the dead one has exited, and the process and
 * the other files go on. When no worker can start at all, files are not read (never in-process:
 * that would give up the bounds) and each says so.
 */
import type { Logger } from '../logger.ts';
import type { ReaderRequest, ReaderResult } from './attachment-reader.ts';
import { WorkerPool, type PoolJobs, type PoolLimits } from './worker-pool.ts';

/** Sent to a reader worker; `bytes` is a copy whose buffer is transferred. */
export interface ReaderWorkerRequest extends ReaderRequest {
  id: number;
}

const ENTRY = new URL('./attachment-worker.mjs', import.meta.url);

function readerJobs(limits: PoolLimits): PoolJobs<ReaderRequest, ReaderResult> {
  return {
    name: 'attachment reader',
    request(job, id) {
      // A copy (memcpy; `Uint8Array.from` would iterate byte by byte), so the caller's buffer stays.
      const copy = new Uint8Array(job.bytes);
      const message: ReaderWorkerRequest = { ...job, id, bytes: copy };
      return { message, transfer: [copy.buffer] };
    },
    failure(_job, failure) {
      switch (failure.kind) {
        case 'timeout':
          return { ok: false, reason: `reading it took longer than ATTACHMENT_TIMEOUT (${limits.timeoutMs} ms)` };
        case 'out-of-memory':
          return { ok: false, reason: `reading it needed more than ATTACHMENT_WORKER_MEMORY (${limits.memoryMb} MB)` };
        case 'crashed':
          return { ok: false, reason: `the reader failed (${failure.message.replace(/\s+/g, ' ').slice(0, 120)})` };
        case 'closed':
          return { ok: false, reason: 'the attachment readers were stopped while reading it' };
      }
    },
    fallback: () => Promise.resolve({ ok: false, reason: 'no attachment reader could start' }),
    reply: readerReply,
  };
}

function readerReply(message: unknown): ReaderResult {
  const m = message as Partial<{ ok: unknown; text: unknown; format: unknown; note: unknown; reason: unknown }> | null;
  if (m?.ok === true && typeof m.text === 'string' && typeof m.format === 'string')
    return { ok: true, text: m.text, format: m.format, ...(typeof m.note === 'string' ? { note: m.note } : {}) };
  return { ok: false, reason: typeof m?.reason === 'string' ? m.reason : 'the reader gave no answer' };
}

/** The attachment reader pool for `limits`; `entry` is swapped by tests for workers that misbehave. */
export function createReaderPool(limits: PoolLimits, logger: Logger, entry: URL = ENTRY): WorkerPool<ReaderRequest, ReaderResult> {
  return new WorkerPool(limits, readerJobs(limits), logger, entry);
}

const shared = new Map<string, WorkerPool<ReaderRequest, ReaderResult>>();

/**
 * One pool per process and limits, started on first use. Its idle workers never keep the process
 * alive, so nothing has to close it.
 */
export function sharedReaderPool(limits: PoolLimits, logger: Logger): WorkerPool<ReaderRequest, ReaderResult> {
  const key = `${limits.workers}:${limits.timeoutMs}:${limits.memoryMb}`;
  let pool = shared.get(key);
  if (!pool) {
    pool = createReaderPool(limits, logger);
    shared.set(key, pool);
  }
  return pool;
}
