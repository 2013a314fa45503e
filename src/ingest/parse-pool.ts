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
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.ts';
import type { ParseOutcome } from '../mail/parse-message.ts';
import { readHeaders, readMessage, type AttachmentFileLimits, type ReadMessage } from './read-message.ts';

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

export type WorkerReply = { type: 'ready' } | { type: 'done'; id: number; result: ReadMessage };

interface Job {
  id: number;
  kind: WorkerRequest['kind'];
  raw: Buffer;
  files?: AttachmentFileLimits;
  resolve: (result: ReadMessage) => void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  timer: NodeJS.Timeout | null;
  /** Terminated or exited: its events are ignored from then on. */
  gone: boolean;
}

const ENTRY = new URL('./parse-worker.mjs', import.meta.url);

export class ParsePool implements MessageReader {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private unavailable = false;
  private closed = false;

  constructor(
    private readonly settings: ParseSettings,
    private readonly logger: Logger,
    /** The worker's entry module; tests swap in workers that hang, crash or exhaust memory. */
    private readonly entry: URL = ENTRY,
  ) {}

  read(raw: Buffer, files?: AttachmentFileLimits): Promise<ReadMessage> {
    return this.submit('message', raw, files);
  }

  async readHeaders(head: Buffer): Promise<ParseOutcome> {
    return (await this.submit('headers', head)).parsed;
  }

  /** Workers alive now (for tests and the health view). */
  get size(): number {
    return this.slots.length;
  }

  /** True once no worker could start and reading went in-process. */
  get inProcess(): boolean {
    return this.unavailable || this.settings.workers <= 0;
  }

  /** Terminates the workers; messages still waiting are read in-process. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.gone = true;
      if (slot.timer) clearTimeout(slot.timer);
      if (slot.job) this.finish(slot.job, failed('the parse pool was closed while reading this message'));
    }
    this.drainInProcess();
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => 0)));
  }

  private submit(kind: Job['kind'], raw: Buffer, files?: AttachmentFileLimits): Promise<ReadMessage> {
    if (this.inProcess || this.closed) return readInProcess(kind, raw, files);
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, kind, raw, resolve, ...(files ? { files } : {}) });
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.unavailable || this.closed) return;
    while (this.slots.length < this.settings.workers && this.slots.length < this.queue.length + this.busy()) {
      if (!this.spawn()) return;
    }
    for (const slot of this.slots) {
      if (!slot.ready || slot.job || slot.gone) continue;
      const job = this.queue.shift();
      if (!job) return;
      this.send(slot, job);
    }
  }

  private busy(): number {
    return this.slots.filter((slot) => slot.job !== null).length;
  }

  private spawn(): boolean {
    let worker: Worker;
    try {
      worker = new Worker(this.entry, {
        resourceLimits: { maxOldGenerationSizeMb: this.settings.memoryMb },
        // Each worker sees a copy of the parent's environment; it reads none of it.
        env: {},
      });
    } catch (error) {
      this.giveUp(error);
      return false;
    }
    const slot: Slot = { worker, ready: false, job: null, timer: null, gone: false };
    this.slots.push(slot);
    worker.unref(); // an idle worker never keeps the process alive
    worker.on('message', (reply: WorkerReply) => this.onReply(slot, reply));
    worker.on('error', (error) => this.onFailure(slot, error));
    worker.on('messageerror', (error) => this.onFailure(slot, error));
    worker.on('exit', (code) => this.onFailure(slot, new Error(`the parse worker exited with code ${code}`)));
    return true;
  }

  private send(slot: Slot, job: Job): void {
    slot.job = job;
    slot.worker.ref(); // a pending message keeps the process alive until it is read
    slot.timer = setTimeout(() => {
      this.retire(slot);
      this.finish(job, failed(`parsing took longer than ${this.settings.timeoutMs} ms; the parse worker was stopped`));
      this.dispatch();
    }, this.settings.timeoutMs);
    const copy = new Uint8Array(job.raw.length);
    copy.set(job.raw);
    const request: WorkerRequest = { id: job.id, kind: job.kind, raw: copy, ...(job.files ? { files: job.files } : {}) };
    slot.worker.postMessage(request, [copy.buffer]);
  }

  private onReply(slot: Slot, reply: WorkerReply): void {
    if (slot.gone) return;
    if (reply.type === 'ready') {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const job = slot.job;
    if (!job || job.id !== reply.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
    slot.worker.unref();
    this.finish(job, reply.result);
    this.dispatch();
  }

  private onFailure(slot: Slot, error: Error): void {
    if (slot.gone) return;
    const started = slot.ready;
    const job = slot.job;
    this.retire(slot);
    if (!started) {
      this.giveUp(error);
      return;
    }
    if (job) {
      const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      this.finish(
        job,
        failed(
          outOfMemory
            ? `parsing needed more than ${this.settings.memoryMb} MB of memory; the parse worker was stopped`
            : `the parse worker failed: ${error.message}`,
        ),
      );
    }
    this.dispatch();
  }

  /** Removes a slot and terminates its worker (a no-op when it already exited). */
  private retire(slot: Slot): void {
    slot.gone = true;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    void slot.worker.terminate().catch(() => 0);
  }

  private giveUp(error: unknown): void {
    if (!this.unavailable) {
      this.logger.warn('no parse worker could start; parsing on the main thread from now on', { error: String(error) });
    }
    this.unavailable = true;
    for (const slot of this.slots.splice(0)) {
      slot.gone = true;
      void slot.worker.terminate().catch(() => 0);
      if (slot.job) this.queue.unshift(slot.job);
    }
    this.drainInProcess();
  }

  private drainInProcess(): void {
    for (const job of this.queue.splice(0)) void readInProcess(job.kind, job.raw, job.files).then(job.resolve);
  }

  private finish(job: Job, result: ReadMessage): void {
    job.resolve(result);
  }
}

function failed(reason: string): ReadMessage {
  return { parsed: { ok: false, reason }, text: '' };
}

async function readInProcess(kind: Job['kind'], raw: Buffer, files?: AttachmentFileLimits): Promise<ReadMessage> {
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
