/**
 * A customer's profile facts with their provenance, and the trusted changes to them (an operator
 * or an import), each written together with its entry in the decision trail.
 */
import type { DbClient } from './client.ts';
import type { Db } from './database.ts';

export interface ProfileFactRecord {
  id: string;
  entityId: string;
  key: string;
  value: string;
  category: string;
  confidence: number;
  /** email | operator | import */
  origin: string;
  sourceMessageId: string | null;
  sourceThreadId: string | null;
  evidence: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  validUntil: Date | null;
  /** active | superseded | expired | deleted */
  status: string;
}

const FACT_FIELDS = {
  id: true,
  entityId: true,
  key: true,
  value: true,
  category: true,
  confidence: true,
  origin: true,
  sourceMessageId: true,
  sourceThreadId: true,
  evidence: true,
  createdAt: true,
  expiresAt: true,
  validUntil: true,
  status: true,
} as const;

/** Every fact of a customer, current and past, by key and newest first within a key. */
export async function customerFacts(db: DbClient, entityId: string): Promise<ProfileFactRecord[]> {
  return db.profileFact.findMany({ where: { entityId }, orderBy: [{ key: 'asc' }, { createdAt: 'desc' }], select: FACT_FIELDS });
}

/** A customer's active facts, by key and oldest first within a key. */
export async function activeFacts(db: DbClient, entityId: string): Promise<ProfileFactRecord[]> {
  return db.profileFact.findMany({
    where: { entityId, status: 'active' },
    orderBy: [{ key: 'asc' }, { createdAt: 'asc' }],
    select: FACT_FIELDS,
  });
}

export async function findFact(db: DbClient, factId: string): Promise<ProfileFactRecord | null> {
  return db.profileFact.findUnique({ where: { id: factId }, select: FACT_FIELDS });
}

/** A fact from a trusted source (an operator or an import), already validated. */
export interface TrustedFactRecord {
  factId: string;
  decisionId: string;
  entityId: string;
  key: string;
  value: string;
  category: string;
  expiresAt: Date | null;
  origin: 'operator' | 'import';
  /** The trail's rule (`operator-set`, `trusted-import`) and its reason, given how many values it replaced. */
  rule: string;
  reason: (replaced: number) => string;
  /** Who set it, as the fact's evidence says ("set by console"). */
  evidence: string;
  now: Date;
}

/**
 * Stores a trusted fact as the key's only active value: earlier active values are superseded by
 * it, and the decision trail records the change, all in one transaction. How many it replaced.
 */
export async function recordTrustedFact(db: Db, f: TrustedFactRecord): Promise<number> {
  return db.$transaction(async (tx) => {
    await tx.profileFact.create({
      data: {
        id: f.factId,
        entityId: f.entityId,
        key: f.key,
        value: f.value,
        category: f.category,
        confidence: 1,
        origin: f.origin,
        evidence: f.evidence,
        createdAt: f.now,
        expiresAt: f.expiresAt,
        decisionId: f.decisionId,
      },
    });
    const replaced = await tx.profileFact.updateMany({
      where: { entityId: f.entityId, key: f.key, status: 'active', id: { not: f.factId } },
      data: { status: 'superseded', validUntil: f.now, supersededById: f.factId },
    });
    await tx.promotionDecision.create({
      data: {
        id: f.decisionId,
        entityId: f.entityId,
        origin: f.origin,
        key: f.key,
        value: f.value,
        category: f.category,
        confidence: 1,
        explicit: true,
        evidence: f.evidence,
        accepted: true,
        rule: f.rule,
        reason: f.reason(replaced.count),
        factId: f.factId,
        createdAt: f.now,
      },
    });
    return replaced.count;
  });
}

/**
 * Takes a fact out of the profile (kept as history, valid until `now`) and records an operator's
 * rejection of it in the decision trail, in one transaction.
 */
export async function recordFactDeletion(
  db: Db,
  fact: ProfileFactRecord,
  decision: { id: string; rule: string; reason: string },
  now: Date,
): Promise<void> {
  await db.$transaction([
    db.profileFact.update({ where: { id: fact.id }, data: { status: 'deleted', validUntil: now } }),
    db.promotionDecision.create({
      data: {
        id: decision.id,
        entityId: fact.entityId,
        origin: 'operator',
        key: fact.key,
        value: fact.value,
        category: fact.category,
        confidence: fact.confidence,
        accepted: false,
        rule: decision.rule,
        reason: decision.reason,
        factId: fact.id,
        createdAt: now,
      },
    }),
  ]);
}
