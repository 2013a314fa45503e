/**
 * Trusted changes to a profile: an operator (CLI or console) or an import. These are the only
 * ways a protected key (account tier, plan, refunds owed...) can be set. Every change is recorded
 * in the decision trail like a promotion, so `why` can explain it.
 */
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { ruleFor, isProtectedKey, type PromotionPolicy } from '../memory/promotion-policy.ts';
import { snakeCase } from '../memory/thread-state.ts';
import { FACT_CATEGORIES, type FactCategory } from '../memory/types.ts';
import type { DbClient } from '../store/client.ts';
import type { Db } from '../store/database.ts';
import { findEntity, type EntityRecord } from '../store/entities.ts';

export type TrustedOrigin = 'operator' | 'import';

export interface TrustedFactInput {
  key: string;
  value: string;
  category?: string;
  /** Null: never expires (the default for trusted facts). */
  expiresAt?: Date | null;
  origin: TrustedOrigin;
  /** Who or what set it, for the trail: "console", "cli", "import crm.csv". */
  actor: string;
}

export async function requireEntity(db: DbClient, ref: string): Promise<EntityRecord> {
  const entity = await findEntity(db, ref);
  if (!entity) throw new AppError('NOT_FOUND', `no customer matches "${ref}" (an entity id, key or address)`);
  return entity;
}

function categoryFor(policy: PromotionPolicy, key: string, requested: string | undefined): FactCategory {
  if (requested && (FACT_CATEGORIES as readonly string[]).includes(requested)) return requested as FactCategory;
  if (isProtectedKey(policy, key)) return 'account';
  return policy.keys[key] ? ruleFor(policy, key, 'other').category : 'other';
}

/** Sets a fact from a trusted source; replaces the key's current value(s). Returns the fact id. */
export async function setTrustedFact(db: Db, policy: PromotionPolicy, entityId: string, input: TrustedFactInput, now = new Date()): Promise<string> {
  const key = snakeCase(input.key);
  const value = input.value.replace(/\s+/g, ' ').trim();
  if (!key) throw new AppError('INPUT_INVALID', `"${input.key}" is not a usable fact key`);
  if (!value || value.length > 500) throw new AppError('INPUT_INVALID', `the value for ${key} must be 1-500 characters`);
  const category = categoryFor(policy, key, input.category);
  const factId = newId('f');
  const decisionId = newId('pd');
  await db.$transaction(async (tx) => {
    const current = await tx.profileFact.findMany({ where: { entityId, key, status: 'active' }, select: { id: true } });
    await tx.profileFact.create({
      data: {
        id: factId,
        entityId,
        key,
        value,
        category,
        confidence: 1,
        origin: input.origin,
        evidence: `set by ${input.actor}`,
        createdAt: now,
        expiresAt: input.expiresAt ?? null,
        decisionId,
      },
    });
    if (current.length > 0) {
      await tx.profileFact.updateMany({
        where: { id: { in: current.map((f) => f.id) } },
        data: { status: 'superseded', validUntil: now, supersededById: factId },
      });
    }
    await tx.promotionDecision.create({
      data: {
        id: decisionId,
        entityId,
        origin: input.origin,
        key,
        value,
        category,
        confidence: 1,
        explicit: true,
        evidence: `set by ${input.actor}`,
        accepted: true,
        rule: input.origin === 'import' ? 'trusted-import' : 'operator-set',
        reason: current.length > 0 ? `replaces ${current.length} earlier value(s)` : 'set by a trusted source',
        factId,
        createdAt: now,
      },
    });
  });
  return factId;
}

/** Removes a fact from the profile (kept as history with the time it stopped being valid). */
export async function deleteFact(db: Db, factId: string, actor: string, now = new Date()): Promise<void> {
  const fact = await db.profileFact.findUnique({ where: { id: factId } });
  if (!fact || fact.status !== 'active') throw new AppError('NOT_FOUND', `no active fact ${factId}`);
  await db.$transaction([
    db.profileFact.update({ where: { id: factId }, data: { status: 'deleted', validUntil: now } }),
    db.promotionDecision.create({
      data: {
        id: newId('pd'),
        entityId: fact.entityId,
        origin: 'operator',
        key: fact.key,
        value: fact.value,
        category: fact.category,
        confidence: fact.confidence,
        accepted: false,
        rule: 'operator-delete',
        reason: `deleted by ${actor}`,
        factId,
        createdAt: now,
      },
    }),
  ]);
}

/** Corrects a fact's value: the old one is superseded, the new one is an operator fact. */
export async function correctFact(db: Db, policy: PromotionPolicy, factId: string, value: string, actor: string, now = new Date()): Promise<string> {
  const fact = await db.profileFact.findUnique({ where: { id: factId } });
  if (!fact || fact.status !== 'active') throw new AppError('NOT_FOUND', `no active fact ${factId}`);
  return setTrustedFact(db, policy, fact.entityId, { key: fact.key, value, category: fact.category, expiresAt: fact.expiresAt, origin: 'operator', actor }, now);
}

export { findEntity };
