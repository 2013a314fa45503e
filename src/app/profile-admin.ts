/**
 * Trusted changes to a profile: an operator (CLI or console) or an import. These are the only
 * ways a protected key (account tier, plan, refunds owed...) can be set. Every change is recorded
 * in the decision trail like a promotion, so `why` can explain it.
 */
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { ruleFor, isProtectedKey, type PromotionPolicy } from '../memory/promotion-policy.ts';
import { factCategoryProblem, factKeyProblem, isFactCategory } from '../memory/fact-input.ts';
import type { FactCategory } from '../memory/types.ts';
import type { DbClient } from '../store/client.ts';
import type { Db } from '../store/database.ts';
import { findEntity, type EntityRecord } from '../store/entities.ts';
import { findFact, recordFactDeletion, recordTrustedFact } from '../store/facts.ts';

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
  if (requested !== undefined && isFactCategory(requested)) return requested;
  if (isProtectedKey(policy, key)) return 'account';
  return policy.keys[key] ? ruleFor(policy, key, 'other').category : 'other';
}

/**
 * Refuses a key that is not snake_case, an unknown category or an empty or over-long value,
 * with one line that says what is accepted. Callers check a whole import before writing any of it.
 */
export function checkTrustedFactInput(input: Pick<TrustedFactInput, 'key' | 'value' | 'category'>): void {
  const problem =
    factKeyProblem(input.key) ??
    (input.category === undefined ? null : factCategoryProblem(input.category)) ??
    valueProblem(input.key, input.value);
  if (problem) throw new AppError('INPUT_INVALID', problem);
}

const MAX_VALUE_LENGTH = 500;
const normaliseValue = (value: string) => value.replace(/\s+/g, ' ').trim();

function valueProblem(key: string, value: string): string | null {
  const length = normaliseValue(value).length;
  return length === 0 || length > MAX_VALUE_LENGTH ? `the value for ${key} must be 1-${MAX_VALUE_LENGTH} characters` : null;
}

/** Sets a fact from a trusted source; replaces the key's current value(s). Returns the fact id. */
export async function setTrustedFact(
  db: Db,
  policy: PromotionPolicy,
  entityId: string,
  input: TrustedFactInput,
  now = new Date(),
): Promise<string> {
  checkTrustedFactInput(input);
  const key = input.key;
  const value = normaliseValue(input.value);
  const category = categoryFor(policy, key, input.category);
  const factId = newId('f');
  await recordTrustedFact(db, {
    factId,
    decisionId: newId('pd'),
    entityId,
    key,
    value,
    category,
    expiresAt: input.expiresAt ?? null,
    origin: input.origin,
    rule: input.origin === 'import' ? 'trusted-import' : 'operator-set',
    reason: (replaced) => (replaced > 0 ? `replaces ${replaced} earlier value(s)` : 'set by a trusted source'),
    evidence: `set by ${input.actor}`,
    now,
  });
  return factId;
}

/** Removes a fact from the profile (kept as history with the time it stopped being valid). */
export async function deleteFact(db: Db, factId: string, actor: string, now = new Date()): Promise<void> {
  const fact = await findFact(db, factId);
  if (!fact || fact.status !== 'active') throw new AppError('NOT_FOUND', `no active fact ${factId}`);
  await recordFactDeletion(db, fact, { id: newId('pd'), rule: 'operator-delete', reason: `deleted by ${actor}` }, now);
}

/** Corrects a fact's value: the old one is superseded, the new one is an operator fact. */
export async function correctFact(
  db: Db,
  policy: PromotionPolicy,
  factId: string,
  value: string,
  actor: string,
  now = new Date(),
): Promise<string> {
  const fact = await findFact(db, factId);
  if (!fact || fact.status !== 'active') throw new AppError('NOT_FOUND', `no active fact ${factId}`);
  return setTrustedFact(
    db,
    policy,
    fact.entityId,
    { key: fact.key, value, category: fact.category, expiresAt: fact.expiresAt, origin: 'operator', actor },
    now,
  );
}

export { findEntity };
