/**
 * PostgreSQL is the source of truth, Redis is not. On start-up and periodically this puts back
 * every job the database says should exist: pending turns, unsent drafts, due promotions. Adding
 * a job that already exists is a no-op (deduplication), so running it often is safe.
 */
import type { Db } from '../store/database.ts';
import type { Runtime } from './runtime.ts';

export interface ReconcileReport {
  turns: number;
  sends: number;
  appends: number;
  promotions: number;
  expiredFacts: number;
}

export async function reconcile(runtime: Runtime, now = new Date()): Promise<ReconcileReport> {
  const { db, config } = runtime;
  const queues = runtime.queues();
  const mailboxId = runtime.mailbox.id;

  const pendingThreads = await db.message.findMany({
    where: { mailboxId, direction: 'inbound', status: { in: ['pending_reply', 'in_turn'] }, threadId: { not: null } },
    distinct: ['threadId'],
    select: { threadId: true },
  });
  for (const { threadId } of pendingThreads) if (threadId) await queues.enqueueTurn(threadId);

  const unsent = await db.draft.findMany({ where: { mailboxId, status: { in: ['queued', 'sending'] } }, select: { id: true } });
  for (const draft of unsent) await queues.enqueueOutbox(draft.id, 'send');

  let appends = 0;
  if (runtime.imapConfigured) {
    const unappended = await db.draft.findMany({ where: { mailboxId, status: 'draft', imapAppendedAt: null }, select: { id: true } });
    for (const draft of unappended) await queues.enqueueOutbox(draft.id, 'append');
    appends = unappended.length;
  }

  const unpromoted = await db.thread.findMany({
    where: { mailboxId, needsPromotion: true },
    select: { id: true, lastMessageAt: true, status: true },
  });
  for (const thread of unpromoted) {
    const delay = thread.status === 'resolved' ? 0 : thread.lastMessageAt.getTime() + config.memory.quietAfterMs - now.getTime();
    await queues.schedulePromotion(thread.id, thread.status === 'resolved' ? 'resolved' : 'quiet', delay);
  }

  const expiredFacts = await sweepExpiredFacts(db, now);
  return { turns: pendingThreads.length, sends: unsent.length, appends, promotions: unpromoted.length, expiredFacts };
}

/** Marks facts past their TTL as expired (prompts already ignore them; this makes it visible). */
export async function sweepExpiredFacts(db: Db, now: Date): Promise<number> {
  const expired = await db.profileFact.findMany({ where: { status: 'active', expiresAt: { lte: now } }, select: { id: true, expiresAt: true } });
  for (const fact of expired) {
    await db.profileFact.update({ where: { id: fact.id }, data: { status: 'expired', validUntil: fact.expiresAt } });
  }
  return expired.length;
}
