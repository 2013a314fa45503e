/**
 * Queue names and job payloads, defined once. Payloads are parsed with zod when a worker takes a
 * job; one that does not parse fails at once without retries (a poison payload never loops).
 */
import { Queue, UnrecoverableError, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { z } from 'zod';

export const QUEUES = { turns: 'turns', promotions: 'promotions', outbox: 'outbox' } as const;
export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export const turnJobSchema = z.object({ threadId: z.string().min(1).max(100) });
export const promotionJobSchema = z.object({
  threadId: z.string().min(1).max(100),
  trigger: z.enum(['quiet', 'resolved', 'manual']),
});
export const outboxJobSchema = z.object({ draftId: z.string().min(1).max(100), action: z.enum(['send', 'append']) });

export type TurnJob = z.infer<typeof turnJobSchema>;
export type PromotionJob = z.infer<typeof promotionJobSchema>;
export type OutboxJob = z.infer<typeof outboxJobSchema>;

/** Parses a job payload at the edge; a bad one becomes an UnrecoverableError (no retries). */
export function parseJobData<T>(schema: z.ZodType<T>, data: unknown, queue: string): T {
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const problem = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new UnrecoverableError(`invalid ${queue} job payload: ${problem}`);
  }
  return parsed.data;
}

const RETRYING: JobsOptions = {
  attempts: 6,
  backoff: { type: 'exponential', delay: 2000 },
  removeOnComplete: { count: 1000 },
  removeOnFail: { count: 5000 },
};

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
   * Removes every trace of these threads and drafts from Redis (customer erasure): their jobs,
   * their deduplication keys, and the entries of the queues' event streams that name them.
   */
  async removeJobsFor(threadIds: ReadonlySet<string>, draftIds: ReadonlySet<string>): Promise<number> {
    let removed = 0;
    const ids = [...threadIds, ...draftIds];
    for (const queue of [this.turns, this.promotions, this.outbox]) {
      const jobs = await queue.getJobs(['waiting', 'delayed', 'prioritized', 'completed', 'failed', 'wait', 'waiting-children']);
      for (const job of jobs) {
        const data = job?.data as { threadId?: unknown; draftId?: unknown } | undefined;
        const hit =
          (typeof data?.threadId === 'string' && threadIds.has(data.threadId)) ||
          (typeof data?.draftId === 'string' && draftIds.has(data.draftId));
        if (job && hit) {
          await job.remove().catch(() => {
            // An active job cannot be removed; it finds its rows gone and ends.
          });
          removed++;
        }
      }
      const backend = queue.getBackend();
      const redis = this.connection;
      const dedupIds = [
        ...[...threadIds].flatMap((id) => [`turn-${id}`, `promote-${id}`]),
        ...[...draftIds].flatMap((id) => [`send-${id}`, `append-${id}`]),
      ];
      if (dedupIds.length > 0) await redis.del(...dedupIds.map((id) => `${backend.keys['de']}:${id}`));
      const events = backend.keys['events'];
      if (events && ids.length > 0) {
        const entries = (await redis.xrange(events, '-', '+')) as Array<[string, string[]]>;
        const named = entries.filter(([, fields]) => fields.some((value) => ids.some((id) => value.includes(id)))).map(([entryId]) => entryId);
        if (named.length > 0) await redis.xdel(events, ...named);
      }
    }
    return removed;
  }

  async close(): Promise<void> {
    await Promise.all([this.turns.close(), this.promotions.close(), this.outbox.close()]);
  }
}
