/**
 * The pipeline's scheduler for the long-running processes: BullMQ jobs on Redis. Turns are
 * deduplicated per thread, promotions debounced per thread (a later schedule replaces the waiting
 * one), outbox jobs deduplicated per draft and action (see src/queue/jobs.ts).
 */
import type { JobQueues } from '../queue/jobs.ts';
import type { Scheduler } from './pipeline.ts';

export function bullmqScheduler(queues: () => JobQueues, now: () => Date): Scheduler {
  return {
    turnDue: (threadId) => queues().enqueueTurn(threadId),
    promotionDue: (threadId, trigger, at) => queues().schedulePromotion(threadId, trigger, at.getTime() - now().getTime()),
    outboxDue: (draftId, action) => queues().enqueueOutbox(draftId, action),
  };
}
