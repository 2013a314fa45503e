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
  /** When it was recorded (promoted, set or imported): the ledger's `recordedAt`. */
  createdAt: Date;
  /** When it became true: the date of the message that states it (or when it was set). */
  validFrom: Date | null;
  expiresAt: Date | null;
  /** When it stopped being true: the date of the statement that superseded it, or its expiry. */
  validUntil: Date | null;
  /** When the profile stopped holding it (superseded, expired, deleted, merged away). */
  retiredAt: Date | null;
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
  validFrom: true,
  expiresAt: true,
  validUntil: true,
  retiredAt: true,
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

/**
 * What the profile held on `asOf`: facts recorded by then and neither retired nor expired by
 * then, by key and oldest first within a key (the ledger read as of a date).
 */
export async function factsAsOf(db: DbClient, entityId: string, asOf: Date): Promise<ProfileFactRecord[]> {
  return db.profileFact.findMany({
    where: {
      entityId,
      createdAt: { lte: asOf },
      AND: [{ OR: [{ retiredAt: null }, { retiredAt: { gt: asOf } }] }, { OR: [{ expiresAt: null }, { expiresAt: { gt: asOf } }] }],
    },
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
        validFrom: f.now,
        expiresAt: f.expiresAt,
        decisionId: f.decisionId,
      },
    });
    const replaced = await tx.profileFact.updateMany({
      where: { entityId: f.entityId, key: f.key, status: 'active', id: { not: f.factId } },
      data: { status: 'superseded', validUntil: f.now, retiredAt: f.now, supersededById: f.factId },
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
    db.profileFact.update({ where: { id: fact.id }, data: { status: 'deleted', validUntil: now, retiredAt: now } }),
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
