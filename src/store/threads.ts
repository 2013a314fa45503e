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
      needsPromotion: true,
    },
  });
  return id;
}

/**
 * Records Message-IDs as belonging to a thread, in one statement. An ID already known keeps its
 * first thread; a referenced-only ID that now arrives as a real message in the same thread is
 * upgraded to "seen".
 */
export async function addThreadKeys(
  db: DbClient,
  mailboxId: string,
  threadId: string,
  keys: ReadonlyArray<{ messageId: string; kind: ThreadKeyMatch['kind'] }>,
): Promise<void> {
  if (keys.length === 0) return;
  const unique = [...new Map(keys.map((k) => [k.messageId, k])).values()];
  await db.$executeRaw`
    INSERT INTO "ThreadKey" ("mailboxId", "messageId", "threadId", "kind")
    SELECT ${mailboxId}, k.message_id, ${threadId}, k.kind
    FROM unnest(${unique.map((k) => k.messageId)}::text[], ${unique.map((k) => k.kind)}::text[]) AS k(message_id, kind)
    ON CONFLICT ("mailboxId", "messageId") DO UPDATE SET "kind" = 'seen'
    WHERE "ThreadKey"."kind" = 'referenced' AND EXCLUDED."kind" <> 'referenced' AND "ThreadKey"."threadId" = EXCLUDED."threadId"`;
}

/** Adds everyone on a message to the thread in one statement; a known address learns its entity. */
export async function addParticipants(
  db: DbClient,
  threadId: string,
  participants: ReadonlyArray<{ address: string; entityId: string | null; role: 'primary' | 'participant' }>,
): Promise<void> {
  if (participants.length === 0) return;
  const unique = [...new Map(participants.map((p) => [p.address, p])).values()];
  await db.$executeRaw`
    INSERT INTO "ThreadParticipant" ("threadId", "address", "entityId", "role")
    SELECT ${threadId}, p.address, p.entity_id, p.role
    FROM unnest(${unique.map((p) => p.address)}::text[], ${unique.map((p) => p.entityId)}::text[], ${unique.map((p) => p.role)}::text[])
      AS p(address, entity_id, role)
    ON CONFLICT ("threadId", "address") DO UPDATE SET "entityId" = COALESCE("ThreadParticipant"."entityId", EXCLUDED."entityId")`;
}

/** A new customer message in an existing thread: it is active again and its clock moves forward. */
export async function touchThread(db: DbClient, threadId: string, at: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE "Thread"
    SET "lastMessageAt" = GREATEST("lastMessageAt", ${at}), "needsPromotion" = true, "status" = 'open',
        "closedAt" = NULL, "updatedAt" = now()
    WHERE "id" = ${threadId}`;
}
