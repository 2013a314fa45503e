/**
 * What happens after each step, in one place: a stored customer message gets a turn; a drafted
 * turn goes to the outbox and (re)schedules its thread's promotion.
 */
import type { TurnOutcome } from './handle-thread-turn.ts';
import type { Runtime } from './runtime.ts';

export async function afterTurn(runtime: Runtime, threadId: string, outcome: TurnOutcome): Promise<void> {
  if (outcome.kind !== 'drafted') return;
  const queues = runtime.queues();
  if (outcome.queuedToSend) await queues.enqueueOutbox(outcome.draftId, 'send');
  else if (runtime.imapConfigured) await queues.enqueueOutbox(outcome.draftId, 'append');
  if (outcome.resolved) await queues.schedulePromotion(threadId, 'resolved', 0);
  else await queues.schedulePromotion(threadId, 'quiet', runtime.config.memory.quietAfterMs);
}
