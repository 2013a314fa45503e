/**
 * What waits for a person besides drafts: sends whose outcome is unknown, threads the agent handed
 * over (a suspected loop), promotions that failed for good. Read by the console; plain records.
 */
import type { DbClient } from './client.ts';
import type { Db } from './database.ts';

export interface UnknownSend {
  id: string;
  threadId: string;
  toAddress: string;
  subject: string;
  error: string | null;
  updatedAt: Date;
}

export interface HandedOffThread {
  id: string;
  subject: string;
  customer: string;
  reason: string;
  at: Date;
}

export async function unknownSends(db: DbClient, limit = 50): Promise<UnknownSend[]> {
  return db.draft.findMany({
    where: { status: 'send_unknown' },
    orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
    take: limit,
    select: { id: true, threadId: true, toAddress: true, subject: true, error: true, updatedAt: true },
  });
}

export async function handedOffThreads(db: DbClient, limit = 20, mailboxId?: string): Promise<HandedOffThread[]> {
  const rows = await db.thread.findMany({
    where: { handoffAt: { not: null }, ...(mailboxId ? { mailboxId } : {}) },
    orderBy: [{ handoffAt: 'desc' }, { id: 'desc' }],
    take: limit,
    select: { id: true, subject: true, handoffReason: true, handoffAt: true, entity: { select: { name: true, key: true } } },
  });
  return rows.map((t) => ({
    id: t.id,
    subject: t.subject,
    customer: t.entity.name ?? t.entity.key,
    reason: t.handoffReason ?? '',
    at: t.handoffAt!,
  }));
}

/** A person settled an unknown send: it was sent (confirmed), or it goes back to the outbox. */
export async function settleUnknownSend(db: Db, draftId: string, outcome: 'sent' | 'queued', now: Date): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const moved = await tx.draft.updateMany({
      where: { id: draftId, status: 'send_unknown' },
      data: outcome === 'sent' ? { status: 'sent', sentAt: now, error: null } : { status: 'queued', sendClaimedAt: null, error: null },
    });
    if (moved.count === 0) return false;
    if (outcome === 'sent') {
      const draft = await tx.draft.findUniqueOrThrow({ where: { id: draftId }, select: { mailboxId: true, messageId: true } });
      await tx.message.updateMany({
        where: { mailboxId: draft.mailboxId, messageId: draft.messageId },
        data: { status: 'sent', sentAt: now },
      });
    }
    return true;
  });
}

/** A person took the handed-off thread over: the marker goes (the loop guard keeps its own count). */
export async function clearHandoff(db: DbClient, threadId: string): Promise<boolean> {
  const cleared = await db.thread.updateMany({
    where: { id: threadId, handoffAt: { not: null } },
    data: { handoffAt: null, handoffReason: null },
  });
  return cleared.count === 1;
}
