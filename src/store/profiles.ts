import type { FactCategory, ProfileState } from '../memory/types.ts';
import type { DbClient } from './client.ts';

/** Profile state of an entity: active facts, past threads with topics, open commitments. */
export async function loadProfile(db: DbClient, entityId: string): Promise<ProfileState | null> {
  const entity = await db.entity.findUnique({
    where: { id: entityId },
    include: {
      facts: { where: { status: 'active' }, orderBy: [{ key: 'asc' }, { createdAt: 'asc' }] },
      commitments: { where: { status: 'open' }, orderBy: { createdAt: 'asc' } },
      threads: {
        where: { topic: { not: null } },
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
    outstandingCommitments: entity.commitments.map((c) => ({ text: c.text, due: c.due })),
  };
}

/** Marks active facts past their expiry as expired (valid until their expiry); how many. */
export async function expireFacts(db: DbClient, now: Date): Promise<number> {
  const expired = await db.profileFact.findMany({
    where: { status: 'active', expiresAt: { lte: now } },
    select: { id: true, expiresAt: true },
  });
  for (const fact of expired) {
    await db.profileFact.update({ where: { id: fact.id }, data: { status: 'expired', validUntil: fact.expiresAt } });
  }
  return expired.length;
}
