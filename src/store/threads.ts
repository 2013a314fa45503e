import { newId } from '../ids.ts';
import type { CandidateThread, ThreadKeyMatch } from '../mail/threading.ts';
import type { DbClient } from './client.ts';

export async function findThreadKeys(db: DbClient, mailboxId: string, messageIds: readonly string[]): Promise<ThreadKeyMatch[]> {
  if (messageIds.length === 0) return [];
  const rows = await db.threadKey.findMany({
    where: { mailboxId, messageId: { in: [...messageIds] } },
    select: { messageId: true, threadId: true, kind: true },
  });
  return rows.map((r) => ({ messageId: r.messageId, threadId: r.threadId, kind: r.kind as ThreadKeyMatch['kind'] }));
}

export async function loadCandidateThreads(db: DbClient, threadIds: readonly string[]): Promise<Map<string, CandidateThread>> {
  if (threadIds.length === 0) return new Map();
  const rows = await db.thread.findMany({
    where: { id: { in: [...new Set(threadIds)] } },
    select: { id: true, entityId: true, participants: { select: { address: true } } },
  });
  return new Map(
    rows.map((r) => [r.id, { id: r.id, entityId: r.entityId, participants: new Set(r.participants.map((p) => p.address)) }]),
  );
}

/** The entity's most recent thread with this normalised subject that was active since `since`. */
export async function findSubjectMatch(
  db: DbClient,
  query: { mailboxId: string; entityId: string; normalizedSubject: string; since: Date },
): Promise<{ threadId: string } | null> {
  if (!query.normalizedSubject) return null;
  const row = await db.thread.findFirst({
    where: {
      mailboxId: query.mailboxId,
      entityId: query.entityId,
      normalizedSubject: query.normalizedSubject,
      lastMessageAt: { gte: query.since },
    },
    orderBy: { lastMessageAt: 'desc' },
    select: { id: true },
  });
  return row ? { threadId: row.id } : null;
}

export async function createThread(
  db: DbClient,
  data: { mailboxId: string; entityId: string; subject: string; normalizedSubject: string; at: Date; linkedThreadId: string | null },
): Promise<string> {
  const id = newId('t');
  await db.thread.create({
    data: {
      id,
      mailboxId: data.mailboxId,
      entityId: data.entityId,
      subject: data.subject,
      normalizedSubject: data.normalizedSubject,
      lastMessageAt: data.at,
      linkedThreadId: data.linkedThreadId,
    },
  });
  return id;
}

/** Records Message-IDs as belonging to a thread. An ID already known keeps its first thread. */
export async function addThreadKeys(
  db: DbClient,
  mailboxId: string,
  threadId: string,
  keys: ReadonlyArray<{ messageId: string; kind: ThreadKeyMatch['kind'] }>,
): Promise<void> {
  if (keys.length === 0) return;
  await db.threadKey.createMany({
    data: keys.map((k) => ({ mailboxId, threadId, messageId: k.messageId, kind: k.kind })),
    skipDuplicates: true,
  });
  // A referenced-only ID that later arrives as a real message is upgraded to "seen".
  const seen = keys.filter((k) => k.kind !== 'referenced').map((k) => k.messageId);
  if (seen.length > 0) {
    await db.threadKey.updateMany({
      where: { mailboxId, messageId: { in: seen }, kind: 'referenced', threadId },
      data: { kind: 'seen' },
    });
  }
}

export async function addParticipants(
  db: DbClient,
  threadId: string,
  participants: ReadonlyArray<{ address: string; entityId: string | null; role: 'primary' | 'participant' }>,
): Promise<void> {
  if (participants.length === 0) return;
  await db.threadParticipant.createMany({
    data: participants.map((p) => ({ threadId, address: p.address, entityId: p.entityId, role: p.role })),
    skipDuplicates: true,
  });
  for (const p of participants) {
    if (p.entityId) {
      await db.threadParticipant.updateMany({ where: { threadId, address: p.address, entityId: null }, data: { entityId: p.entityId } });
    }
  }
}

/** A new customer message: the thread is active again and its clock moves forward. */
export async function touchThread(db: DbClient, threadId: string, at: Date): Promise<void> {
  await db.thread.updateMany({ where: { id: threadId, lastMessageAt: { lt: at } }, data: { lastMessageAt: at } });
  await db.thread.update({ where: { id: threadId }, data: { needsPromotion: true } });
  await db.thread.updateMany({ where: { id: threadId, status: { not: 'open' } }, data: { status: 'open', closedAt: null } });
}
