import type { FactCategory, ProfileState } from '../memory/types.ts';
import type { DbClient } from './client.ts';

/**
 * Profile state of an entity: active facts, past threads with topics, open commitments. With
 * `asOf`, what the profile held on that date: facts recorded by then and not yet retired or
 * expired, threads closed by then, commitments made by then and not yet closed (overdue by then).
 */
export async function loadProfile(db: DbClient, entityId: string, asOf?: Date): Promise<ProfileState | null> {
  const believed = asOf
    ? {
        createdAt: { lte: asOf },
        AND: [{ OR: [{ retiredAt: null }, { retiredAt: { gt: asOf } }] }, { OR: [{ expiresAt: null }, { expiresAt: { gt: asOf } }] }],
      }
    : { status: 'active' };
  const open = asOf
    ? { createdAt: { lte: asOf }, OR: [{ resolvedAt: null }, { resolvedAt: { gt: asOf } }] }
    : { status: { in: ['open', 'overdue'] } };
  const entity = await db.entity.findUnique({
    where: { id: entityId },
    include: {
      facts: { where: believed, orderBy: [{ key: 'asc' }, { createdAt: 'asc' }] },
      commitments: { where: open, orderBy: { createdAt: 'asc' } },
      threads: {
        where: { topic: { not: null }, ...(asOf ? { closedAt: { lte: asOf } } : {}) },
        orderBy: { closedAt: 'desc' },
        take: 20,
        select: { id: true, topic: true, closedAt: true },
      },
    },
  });
  if (!entity) return null;
  return {
    entityId: entity.id,
    name: entity.name,
    facts: entity.facts.map((f) => ({
      key: f.key,
      value: f.value,
      category: f.category as FactCategory,
      confidence: f.confidence,
      origin: f.origin,
      expiresAt: f.expiresAt,
    })),
    pastThreads: entity.threads.map((t) => ({ threadId: t.id, topic: t.topic ?? '', closedAt: t.closedAt })),
    outstandingCommitments: entity.commitments.map((c) => ({
      text: c.text,
      due: c.due,
      dueAt: c.dueAt,
      overdue: asOf ? c.dueAt !== null && c.dueAt < asOf : c.status === 'overdue',
    })),
  };
}

/** Marks active facts past their expiry as expired (valid until their expiry); how many. */
export async function expireFacts(db: DbClient, now: Date): Promise<number> {
  const expired = await db.profileFact.findMany({
    where: { status: 'active', expiresAt: { lte: now } },
    select: { id: true, expiresAt: true },
  });
  for (const fact of expired) {
    await db.profileFact.update({
      where: { id: fact.id },
      data: { status: 'expired', validUntil: fact.expiresAt, retiredAt: fact.expiresAt },
    });
  }
  return expired.length;
}
