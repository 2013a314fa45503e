/**
 * A small pool of warm worker threads for untrusted input: the parse pool (parse-pool.ts) and the
 * attachment reader pool (attachment-pool.ts) are both this. A job is sent to an idle worker; a
 * synchronous CPU loop cannot be interrupted from the thread it runs on, so a job that takes longer
 * than `timeoutMs` has its worker terminated (and replaced), and a worker whose V8 heap passes
 * `memoryMb` (`resourceLimits`) dies alone: either costs that job only (`failure` turns it into a
 * result), never the process or the jobs after it.
 *
 * Memory in total: never more than `workers` threads exist, counting a terminated one until its
 * `exit` event says its memory is gone; its replacement starts only then. Idle workers are unref'd
 * (they never keep the process alive); a busy one is ref'd until its answer.
 *
 * The worker's protocol: it posts `{ type: 'ready' }` once its modules are loaded (so a worker that
 * cannot start is told apart from a job that kills one), then answers each `{ id, ... }` request
 * with `{ type: 'done', id, result }`.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.ts';

export interface PoolLimits {
  /** Worker threads at most. */
  workers: number;
  /** A job taking longer than this is given up: its worker is terminated and replaced. */
  timeoutMs: number;
  /** Each worker's V8 heap limit in MB (strings, objects; ArrayBuffers are outside it). */
  memoryMb: number;
}

/** Why a job got no answer from its worker. */
export type JobFailure = { kind: 'timeout' } | { kind: 'out-of-memory' } | { kind: 'crashed'; message: string } | { kind: 'closed' };

export interface PoolJobs<Job, Result> {
  /** Names the pool in the log line said when no worker can start ("parse", "attachment reader"). */
  name: string;
  /** The request posted for a job, and the buffers transferred with it (copies, never the caller's). */
  request(job: Job, id: number): { message: object; transfer: ArrayBuffer[] };
  /** The result of a job its worker never answered. */
  failure(job: Job, failure: JobFailure): Result;
  /** The result when no worker can start at all (in-process reading, or a refusal). */
  fallback(job: Job): Promise<Result>;
  /** Checks a worker's answer (it crossed a thread boundary: structured clone, not a type). */
  reply(result: unknown): Result;
}

export type PoolReply = { type: 'ready' } | { type: 'done'; id: number; result: unknown };

interface Pending<Job, Result> {
  id: number;
  job: Job;
  resolve: (result: Result) => void;
}

interface Slot<Job, Result> {
  worker: Worker;
  ready: boolean;
  pending: Pending<Job, Result> | null;
  timer: NodeJS.Timeout | null;
  /** Terminated or exited: its events are ignored from then on. */
  gone: boolean;
  /** Counted in `exiting` until its `exit` event. */
  retired: boolean;
}

export class WorkerPool<Job, Result> {
  private readonly slots: Array<Slot<Job, Result>> = [];
  /** Terminated workers whose `exit` has not come yet: they still count against `workers`. */
  private exiting = 0;
  private readonly queue: Array<Pending<Job, Result>> = [];
  private nextId = 1;
  private unavailable = false;
  private closed = false;

  constructor(
    private readonly limits: PoolLimits,
    private readonly jobs: PoolJobs<Job, Result>,
    private readonly logger: Logger,
    private readonly entry: URL,
  ) {}

  /** Never rejects: a job its worker cannot finish comes back as `jobs.failure(...)`. */
  run(job: Job): Promise<Result> {
    if (this.inProcess || this.closed) return this.jobs.fallback(job);
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, job, resolve });
      this.dispatch();
    });
  }

  /** Workers alive now (for tests and the health view). */
  get size(): number {
    return this.slots.length;
  }

  /** True once no worker could start (jobs go to `fallback`), or when the pool has no workers. */
  get inProcess(): boolean {
    return this.unavailable || this.limits.workers <= 0;
  }

  /** Terminates the workers; jobs still waiting go to `fallback`. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.gone = true;
      if (slot.timer) clearTimeout(slot.timer);
      if (slot.pending) slot.pending.resolve(this.jobs.failure(slot.pending.job, { kind: 'closed' }));
    }
    this.drainToFallback();
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => 0)));
  }

  private dispatch(): void {
    if (this.unavailable || this.closed) return;
    while (this.slots.length + this.exiting < this.limits.workers && this.slots.length < this.queue.length + this.busy()) {
      if (!this.spawn()) return;
    }
    for (const slot of this.slots) {
      if (!slot.ready || slot.pending || slot.gone) continue;
      const pending = this.queue.shift();
      if (!pending) return;
      this.send(slot, pending);
    }
  }

  private busy(): number {
    return this.slots.filter((slot) => slot.pending !== null).length;
  }

  private spawn(): boolean {
    let worker: Worker;
    try {
      worker = new Worker(this.entry, {
        resourceLimits: { maxOldGenerationSizeMb: this.limits.memoryMb },
        // Each worker would see a copy of the parent's environment; it reads none of it.
        env: {},
        // Nor the parent's `--import tsx`: the entry registers tsx itself, after loading what must
        // not go through its hooks (pdf-bounded.mjs).
        execArgv: [],
      });
    } catch (error) {
      this.giveUp(error);
      return false;
    }
    const slot: Slot<Job, Result> = { worker, ready: false, pending: null, timer: null, gone: false, retired: false };
    this.slots.push(slot);
    worker.unref(); // an idle worker never keeps the process alive
    worker.on('message', (reply: PoolReply) => this.onReply(slot, reply));
    worker.on('error', (error) => this.onFailure(slot, error));
    worker.on('messageerror', (error) => this.onFailure(slot, error));
    worker.on('exit', (code) => {
      if (!slot.gone) this.onFailure(slot, new Error(`the ${this.jobs.name} worker exited with code ${code}`));
      if (slot.retired) {
        slot.retired = false;
        this.exiting--;
        this.dispatch();
      }
    });
    return true;
  }

  private send(slot: Slot<Job, Result>, pending: Pending<Job, Result>): void {
    slot.pending = pending;
    slot.worker.ref(); // a pending job keeps the process alive until it is answered
    slot.timer = setTimeout(() => {
      this.retire(slot);
      pending.resolve(this.jobs.failure(pending.job, { kind: 'timeout' }));
      this.dispatch();
    }, this.limits.timeoutMs);
    const { message, transfer } = this.jobs.request(pending.job, pending.id);
    slot.worker.postMessage(message, transfer);
  }

  private onReply(slot: Slot<Job, Result>, reply: PoolReply): void {
    if (slot.gone) return;
    if (reply.type === 'ready') {
      slot.ready = true;
      this.dispatch();
      return;
    }
    const pending = slot.pending;
    if (!pending || pending.id !== reply.id) return;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.pending = null;
    slot.worker.unref();
    pending.resolve(this.jobs.reply(reply.result));
    this.dispatch();
  }

  private onFailure(slot: Slot<Job, Result>, error: Error): void {
    if (slot.gone) return;
    const started = slot.ready;
    const pending = slot.pending;
    this.retire(slot);
    if (!started) {
      this.giveUp(error);
      return;
    }
    if (pending) {
      const outOfMemory = (error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      pending.resolve(
        this.jobs.failure(pending.job, outOfMemory ? { kind: 'out-of-memory' } : { kind: 'crashed', message: error.message }),
      );
    }
    this.dispatch();
  }

  /** Removes a slot and terminates its worker; it counts as `exiting` until its `exit` event. */
  private retire(slot: Slot<Job, Result>): void {
    slot.gone = true;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    slot.retired = true;
    this.exiting++;
    void slot.worker.terminate().catch(() => 0);
  }

  private giveUp(error: unknown): void {
    if (!this.unavailable) {
      this.logger.warn(`no ${this.jobs.name} worker could start`, { error: String(error) });
    }
    this.unavailable = true;
    for (const slot of this.slots.splice(0)) {
      slot.gone = true;
      void slot.worker.terminate().catch(() => 0);
      if (slot.pending) this.queue.unshift(slot.pending);
    }
    this.drainToFallback();
  }

  private drainToFallback(): void {
    for (const pending of this.queue.splice(0)) void this.jobs.fallback(pending.job).then(pending.resolve);
  }
}
