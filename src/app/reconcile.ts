/**
 * PostgreSQL is the source of truth, Redis is not. On start-up and periodically this puts back
 * every job the database says should exist: pending turns, queued drafts, due promotions. Adding
 * a job that already exists is a no-op (deduplication), so running it often is safe. A send
 * claimed long ago whose outcome never arrived is never re-queued: it is settled from the Sent
 * folder when the message is there, or held for a person.
 */
import { describeError } from '../errors.ts';
import type { Db } from '../store/database.ts';
import { markSendUnknown, queuedDraftIds, recordSent, staleSendClaims, unappendedDraftIds } from '../store/outbox-store.ts';
import { expireFacts } from '../store/profiles.ts';
import { pendingTurnThreadIds, threadsAwaitingPromotion } from '../store/turns.ts';
import type { Runtime } from './runtime.ts';

export interface ReconcileReport {
  turns: number;
  sends: number;
  appends: number;
  promotions: number;
  expiredFacts: number;
  /** Stale send claims settled: found in the Sent folder, or held for a person. */
  sendsFoundSent: number;
  sendsUnknown: number;
}

export async function reconcile(runtime: Runtime, now = new Date()): Promise<ReconcileReport> {
  const { db, config } = runtime;
  const queues = runtime.queues();
  const mailboxId = runtime.mailbox.id;

  const pendingThreads = await pendingTurnThreadIds(db, mailboxId);
  for (const threadId of pendingThreads) await queues.enqueueTurn(threadId);

  const queued = await queuedDraftIds(db, mailboxId);
  for (const draftId of queued) await queues.enqueueOutbox(draftId, 'send');

  let appends = 0;
  if (runtime.imapConfigured) {
    const unappended = await unappendedDraftIds(db, mailboxId);
    for (const draftId of unappended) await queues.enqueueOutbox(draftId, 'append');
    appends = unappended.length;
  }

  const settled = await settleStaleSends(runtime, now);

  const unpromoted = await threadsAwaitingPromotion(db, mailboxId);
  for (const thread of unpromoted) {
    const delay = thread.status === 'resolved' ? 0 : thread.lastMessageAt.getTime() + config.memory.quietAfterMs - now.getTime();
    await queues.schedulePromotion(thread.id, thread.status === 'resolved' ? 'resolved' : 'quiet', delay);
  }

  const expiredFacts = await sweepExpiredFacts(db, now);
  return { turns: pendingThreads.length, sends: queued.length, appends, promotions: unpromoted.length, expiredFacts, ...settled };
}

async function settleStaleSends(runtime: Runtime, now: Date): Promise<{ sendsFoundSent: number; sendsUnknown: number }> {
  const { db, config } = runtime;
  const stale = await staleSendClaims(db, runtime.mailbox.id, new Date(now.getTime() - config.trust.sendUnknownAfterMs));
  let sendsFoundSent = 0;
  let sendsUnknown = 0;
  for (const draft of stale) {
    const sent = runtime.sentFolder();
    const found = sent
      ? await sent.contains(draft.messageId).catch((error: unknown) => {
          runtime.logger.warn('could not search the Sent folder', { draftId: draft.id, error: describeError(error) });
          return false;
        })
      : false;
    if (found) {
      await recordSent(db, draft, null, now);
      sendsFoundSent++;
    } else if (
      await markSendUnknown(
        db,
        draft.id,
        'the send was claimed but its outcome was never recorded (the process stopped mid-send); check whether the customer got it, then confirm or send again',
      )
    ) {
      runtime.logger.warn('send outcome unknown; held for a person', { draftId: draft.id, threadId: draft.threadId });
      sendsUnknown++;
    }
  }
  return { sendsFoundSent, sendsUnknown };
}

/** Marks facts past their TTL as expired (prompts already ignore them; this makes it visible). */
export async function sweepExpiredFacts(db: Db, now: Date): Promise<number> {
  return expireFacts(db, now);
}
