/**
 * Queue names and job payloads, defined once. Payloads are parsed with zod when a worker takes a
 * job; one that does not parse fails at once without retries (a poison payload never loops).
 */
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { AppError } from '../errors.ts';

export const QUEUES = { turns: 'turns', promotions: 'promotions', outbox: 'outbox' } as const;

export const turnJobSchema = z.object({ threadId: z.string().min(1).max(100) });
export const promotionJobSchema = z.object({
  threadId: z.string().min(1).max(100),
  // 'manual' is what an operator's promotion was called before 'operator'; a job queued then still runs.
  trigger: z
    .enum(['quiet', 'resolved', 'periodic', 'checkpoint', 'operator', 'manual'])
    .transform((t) => (t === 'manual' ? 'operator' : t)),
});
export const outboxJobSchema = z.object({ draftId: z.string().min(1).max(100), action: z.enum(['send', 'append']) });

export type TurnJob = z.infer<typeof turnJobSchema>;
export type PromotionJob = z.output<typeof promotionJobSchema>;
export type OutboxJob = z.infer<typeof outboxJobSchema>;

/**
 * Parses a job payload at the edge; a bad one is `QUEUE_PAYLOAD_INVALID`, which the catalog marks
 * permanent, so the worker fails it once without retries.
 */
export function parseJobData<T>(schema: z.ZodType<T>, data: unknown, queue: string): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const problem = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new AppError('QUEUE_PAYLOAD_INVALID', `invalid ${queue} job payload: ${problem}`);
  }
  return parsed.data;
}

const RETRYING: JobsOptions = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
};

const SCAN_COUNT = 500;

/** What customer erasure removes from Redis: jobs of these threads and drafts, and mentions. */
export interface RedisErasureTarget {
  threadIds: ReadonlySet<string>;
  draftIds: ReadonlySet<string>;
  /** Redacts a stored value (job data, return values, errors, logs); omitted: ids only. */
  redact?: (text: string) => { value: string; changed: boolean };
}

/** Counts of what changed in Redis, by kind; never the values. */
export interface RedisErasure {
  keysScanned: number;
  jobsRemoved: number;
  /** Keys named after an erased thread or draft (deduplication keys). */
  keysDeleted: number;
  /** Job hash fields (data, returnvalue, failedReason, stacktrace…) redacted in place. */
  fieldsRedacted: number;
  logLinesRedacted: number;
  stringsRedacted: number;
  eventsRemoved: number;
}

/** Whether a job payload (JSON text) names one of the threads or drafts. */
function jobNames(data: string, target: RedisErasureTarget): boolean {
  try {
    const parsed = JSON.parse(data) as { threadId?: unknown; draftId?: unknown } | null;
    return (
      (typeof parsed?.threadId === 'string' && target.threadIds.has(parsed.threadId)) ||
      (typeof parsed?.draftId === 'string' && target.draftIds.has(parsed.draftId))
    );
  } catch {
    return false;
  }
}

/** Producer side of the three queues. */
export class JobQueues {
  readonly turns: Queue;
  readonly promotions: Queue;
  readonly outbox: Queue;

  constructor(
    private readonly connection: Redis,
    readonly prefix: string,
  ) {
    this.turns = new Queue(QUEUES.turns, { connection, prefix });
    this.promotions = new Queue(QUEUES.promotions, { connection, prefix });
    this.outbox = new Queue(QUEUES.outbox, { connection, prefix });
  }

  /**
   * One turn job per thread at a time: while a turn runs, at most one more waits, and it picks up
   * every message that arrived meanwhile. Different threads run in parallel.
   */
  async enqueueTurn(threadId: string): Promise<void> {
    const data: TurnJob = { threadId };
    await this.turns.add('turn', data, { ...RETRYING, deduplication: { id: `turn-${threadId}`, keepLastIfActive: true } });
  }

  /** (Re)schedules the thread's promotion: debounced, so a thread has at most one pending. */
  async schedulePromotion(threadId: string, trigger: PromotionJob['trigger'], delayMs: number): Promise<void> {
    const data: PromotionJob = { threadId, trigger };
    await this.promotions.add('promote', data, {
      ...RETRYING,
      delay: Math.max(0, delayMs),
      deduplication: { id: `promote-${threadId}`, replace: true, keepLastIfActive: true },
    });
  }

  async enqueueOutbox(draftId: string, action: OutboxJob['action']): Promise<void> {
    const data: OutboxJob = { draftId, action };
    await this.outbox.add(action, data, { ...RETRYING, attempts: 8, deduplication: { id: `${action}-${draftId}` } });
  }

  /**
   * Customer erasure in Redis, in one bounded pass over the queues' keys (`SCAN … COUNT 500`):
   * jobs whose payload names one of the threads or drafts are removed (an active job cannot be;
   * it finds its rows gone and ends), keys named after them (deduplication keys) are deleted,
   * and every other value is redacted with `redact`: job hashes field by field (data,
   * returnvalue, failedReason, stacktrace…), job logs line by line, plain strings. Event-stream
   * entries naming a thread or draft, or mentioning the customer, are deleted.
   */
  async removeJobsFor(target: RedisErasureTarget): Promise<RedisErasure> {
    const redis = this.connection;
    const ids = [...target.threadIds, ...target.draftIds];
    const namesIds = (text: string) => ids.some((id) => text.includes(id));
    const redact = (text: string) => target.redact?.(text) ?? { value: text, changed: false };
    const report: RedisErasure = {
      keysScanned: 0,
      jobsRemoved: 0,
      keysDeleted: 0,
      fieldsRedacted: 0,
      logLinesRedacted: 0,
      stringsRedacted: 0,
      eventsRemoved: 0,
    };
    const queues = new Map<string, Queue>([
      [QUEUES.turns, this.turns],
      [QUEUES.promotions, this.promotions],
      [QUEUES.outbox, this.outbox],
    ]);
    const streams: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${this.prefix}:*`, 'COUNT', SCAN_COUNT);
      cursor = next;
      report.keysScanned += keys.length;
      const types = await Promise.all(keys.map((key) => redis.type(key)));
      for (const [i, key] of keys.entries()) {
        const [queueName = '', ...rest] = key.slice(this.prefix.length + 1).split(':');
        if (namesIds(key)) {
          report.keysDeleted += await redis.del(key);
          continue;
        }
        const type = types[i];
        if (type === 'hash') {
          const fields = await redis.hgetall(key);
          const queue = queues.get(queueName);
          if (queue && rest.length === 1 && rest[0] && typeof fields['data'] === 'string' && jobNames(fields['data'], target)) {
            const removed = await queue.remove(rest[0]).catch(() => 0);
            if (removed > 0) {
              report.jobsRemoved += removed;
              continue;
            }
          }
          for (const [field, value] of Object.entries(fields)) {
            const redacted = redact(value);
            if (!redacted.changed) continue;
            await redis.hset(key, field, redacted.value);
            report.fieldsRedacted++;
          }
        } else if (type === 'list' && key.endsWith(':logs')) {
          const length = await redis.llen(key);
          for (let start = 0; start < length; start += SCAN_COUNT) {
            const lines = await redis.lrange(key, start, start + SCAN_COUNT - 1);
            for (const [j, line] of lines.entries()) {
              const redacted = redact(line);
              if (!redacted.changed) continue;
              await redis.lset(key, start + j, redacted.value);
              report.logLinesRedacted++;
            }
          }
        } else if (type === 'string') {
          const value = await redis.get(key);
          const redacted = value === null ? null : redact(value);
          if (redacted?.changed) {
            await redis.set(key, redacted.value, 'KEEPTTL');
            report.stringsRedacted++;
          }
        } else if (type === 'stream') streams.push(key);
      }
    } while (cursor !== '0');
    // Streams last, so the entries the removals above just added are looked at too.
    for (const stream of streams) report.eventsRemoved += await this.scrubStream(stream, namesIds, redact);
    return report;
  }

  private async scrubStream(
    key: string,
    namesIds: (text: string) => boolean,
    redact: (text: string) => { changed: boolean },
  ): Promise<number> {
    const redis = this.connection;
    let removed = 0;
    let start = '-';
    for (;;) {
      const entries = (await redis.xrange(key, start, '+', 'COUNT', SCAN_COUNT)) as Array<[string, string[]]>;
      if (entries.length === 0) break;
      const named = entries
        .filter(([, fields]) => fields.some((value) => namesIds(value) || redact(value).changed))
        .map(([entryId]) => entryId);
      if (named.length > 0) removed += await redis.xdel(key, ...named);
      if (entries.length < SCAN_COUNT) break;
      start = `(${entries[entries.length - 1]?.[0] ?? ''}`;
    }
    return removed;
  }

  /** Fails fast when Redis cannot be reached (erasure checks before it changes the database). */
  async ping(): Promise<void> {
    await this.connection.ping();
  }

  async close(): Promise<void> {
    await Promise.all([this.turns.close(), this.promotions.close(), this.outbox.close()]);
  }
}
