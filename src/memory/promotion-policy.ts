/**
 * The promotion policy: which candidate facts from a thread cross into the durable profile. Data
 * (config/promotion-policy.json, validated here) plus small pure functions. Every candidate gets a
 * decision naming the rule that decided it, accepted or not.
 */
import { z } from 'zod';
import { parseDuration } from '../duration.ts';
import { FACT_CATEGORIES, type FactCategory } from './types.ts';
import { snakeCase } from './thread-state.ts';

const durationOrNull = z.union([
  z.null(),
  z.string().refine((v) => parseDuration(v) !== null, { message: 'not a duration like 48h or 180d' }),
]);

const categoryRuleSchema = z.object({
  allowed: z.boolean(),
  minConfidence: z.number().min(0).max(1),
  requireExplicit: z.boolean(),
  ttl: durationOrNull,
  multiValued: z.boolean(),
});

const keyRuleSchema = categoryRuleSchema.partial().extend({ category: z.enum(FACT_CATEGORIES as unknown as [string, ...string[]]).optional() });

const regexSource = z.string().refine(
  (source) => {
    try {
      new RegExp(source);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'not a valid regular expression' },
);

export const policySchema = z.object({
  version: z.string().min(1),
  description: z.string().optional(),
  protectedKeys: z.object({ why: z.string().optional(), keys: z.array(z.string()), patterns: z.array(regexSource) }),
  emotionKeys: z.object({ why: z.string().optional(), patterns: z.array(regexSource) }),
  categories: z.object(Object.fromEntries(FACT_CATEGORIES.map((c) => [c, categoryRuleSchema])) as Record<FactCategory, typeof categoryRuleSchema>),
  keys: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'keys are snake_case'), keyRuleSchema),
});

export type PromotionPolicy = z.infer<typeof policySchema>;

export interface EffectiveRule {
  category: FactCategory;
  allowed: boolean;
  minConfidence: number;
  requireExplicit: boolean;
  ttlMs: number | null;
  multiValued: boolean;
}

export function ruleFor(policy: PromotionPolicy, key: string, category: FactCategory): EffectiveRule {
  const keyRule = policy.keys[key];
  const effectiveCategory = (keyRule?.category as FactCategory | undefined) ?? category;
  const base = policy.categories[effectiveCategory];
  const ttl = keyRule?.ttl !== undefined ? keyRule.ttl : base.ttl;
  return {
    category: effectiveCategory,
    allowed: keyRule?.allowed ?? base.allowed,
    minConfidence: keyRule?.minConfidence ?? base.minConfidence,
    requireExplicit: keyRule?.requireExplicit ?? base.requireExplicit,
    ttlMs: ttl === null ? null : parseDuration(ttl),
    multiValued: keyRule?.multiValued ?? base.multiValued,
  };
}

export function isProtectedKey(policy: PromotionPolicy, key: string): boolean {
  return policy.protectedKeys.keys.includes(key) || policy.protectedKeys.patterns.some((p) => new RegExp(p, 'i').test(key));
}

function isEmotionKey(policy: PromotionPolicy, key: string): boolean {
  return policy.emotionKeys.patterns.some((p) => new RegExp(p, 'i').test(key));
}

export interface Candidate {
  key: string;
  value: string;
  category: string;
  confidence: number;
  explicit: boolean;
  evidence: string;
  sourceMessageId: string;
}

export interface SourceMessage {
  text: string;
  date: Date;
  /** The sender failed DMARC at our own server: nothing from this message is trusted. */
  unverified: boolean;
}

export interface ExistingFact {
  id: string;
  key: string;
  value: string;
  confidence: number;
  origin: string;
  sourceDate: Date | null;
}

export type FactAction =
  | { kind: 'insert'; expiresAt: Date | null }
  | { kind: 'supersede'; replacesFactId: string; expiresAt: Date | null }
  | { kind: 'refresh'; factId: string; expiresAt: Date | null };

export interface Decision {
  candidate: Candidate & { key: string; category: FactCategory };
  accepted: boolean;
  rule: string;
  reason: string;
  action: FactAction | null;
  sourceDate: Date | null;
}

export interface DecideInput {
  policy: PromotionPolicy;
  candidates: readonly Candidate[];
  /** The thread's customer messages by Message-ID: the only places evidence may come from. */
  messages: ReadonlyMap<string, SourceMessage>;
  existing: readonly ExistingFact[];
  maxActiveFacts: number;
}

const normalise = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * Decides every candidate. Candidates are considered in the order their source messages were
 * written, so a customer who changes their mind in one thread ends with the newer value.
 */
export function decidePromotions(input: DecideInput): Decision[] {
  const { policy } = input;
  const active = input.existing.map((f) => ({ ...f }));
  const ordered = [...input.candidates].sort(
    (a, b) => (input.messages.get(a.sourceMessageId)?.date.getTime() ?? 0) - (input.messages.get(b.sourceMessageId)?.date.getTime() ?? 0),
  );
  const decisions: Decision[] = [];

  for (const raw of ordered) {
    const key = snakeCase(raw.key);
    const category = (FACT_CATEGORIES as readonly string[]).includes(raw.category) ? (raw.category as FactCategory) : 'other';
    const candidate = { ...raw, key, category, value: raw.value.replace(/\s+/g, ' ').trim(), confidence: clamp(raw.confidence) };
    const source = input.messages.get(raw.sourceMessageId) ?? null;
    const decide = (accepted: boolean, rule: string, reason: string, action: FactAction | null = null) => {
      decisions.push({ candidate, accepted, rule, reason, action, sourceDate: source?.date ?? null });
    };

    if (!key || !candidate.value || candidate.value.length > 200) {
      decide(false, 'well-formed', 'key must be snake_case and value 1-200 characters');
      continue;
    }
    if (!source) {
      decide(false, 'cited-source', `cites ${raw.sourceMessageId || '(nothing)'}, which is not a customer message of this thread`);
      continue;
    }
    if (!raw.evidence.trim() || !normalise(source.text).includes(normalise(raw.evidence))) {
      decide(false, 'evidence-in-source', 'the evidence does not occur in the cited message (the model cannot invent facts)');
      continue;
    }
    if (source.unverified) {
      decide(false, 'verified-sender', 'the cited message failed DMARC; an unverified sender promotes nothing');
      continue;
    }
    if (category === 'sentiment' || isEmotionKey(policy, key)) {
      decide(false, 'no-sentiment', 'sentiment and emotion are never promoted; they stay with the thread');
      continue;
    }
    if (isProtectedKey(policy, key)) {
      decide(false, 'protected-key', `${key} is protected: only an operator (facts set) or an import may set it, never an email`);
      continue;
    }
    const rule = ruleFor(policy, key, category);
    candidate.category = rule.category;
    if (!rule.allowed) {
      decide(false, 'category-allowed', `${rule.category} facts are not promoted by this policy`);
      continue;
    }
    if (rule.requireExplicit && !raw.explicit) {
      decide(false, 'explicit-required', `${key} must be stated explicitly by the customer`);
      continue;
    }
    if (candidate.confidence < rule.minConfidence) {
      decide(false, 'min-confidence', `confidence ${candidate.confidence} is below ${rule.minConfidence} for ${key}`);
      continue;
    }
    const expiresAt = rule.ttlMs === null ? null : new Date(source.date.getTime() + rule.ttlMs);
    const sameKey = active.filter((f) => f.key === key);
    const sameValue = sameKey.find((f) => normalise(f.value) === normalise(candidate.value));
    if (sameValue) {
      decide(true, 'refresh', 'already known; its lifetime is renewed', { kind: 'refresh', factId: sameValue.id, expiresAt });
      continue;
    }
    if (!rule.multiValued && sameKey.length > 0) {
      const current = sameKey[0]!;
      if (current.origin !== 'email') {
        decide(false, 'trusted-value', `${key} was set by an ${current.origin}; an email does not override it`);
        continue;
      }
      if (!raw.explicit || candidate.confidence < current.confidence - 0.05) {
        decide(false, 'supersede-weaker', `weaker than the current value "${current.value}" (explicit and at least as confident is required)`);
        continue;
      }
      if (current.sourceDate && source.date <= current.sourceDate) {
        decide(false, 'supersede-older', `older than the current value "${current.value}"`);
        continue;
      }
      decide(true, 'supersede', `newer explicit value replaces "${current.value}"`, { kind: 'supersede', replacesFactId: current.id, expiresAt });
      const index = active.indexOf(current);
      active.splice(index, 1, { id: pendingFactId(decisions.length - 1), key, value: candidate.value, confidence: candidate.confidence, origin: 'email', sourceDate: source.date });
      continue;
    }
    if (active.length >= input.maxActiveFacts) {
      decide(false, 'profile-bound', `the profile already holds ${input.maxActiveFacts} active facts`);
      continue;
    }
    decide(true, 'accepted', `meets the ${rule.category} rule (confidence ≥ ${rule.minConfidence}${rule.requireExplicit ? ', explicit' : ''})`, {
      kind: 'insert',
      expiresAt,
    });
    active.push({ id: pendingFactId(decisions.length - 1), key, value: candidate.value, confidence: candidate.confidence, origin: 'email', sourceDate: source.date });
  }
  return decisions;
}

/** Facts accepted earlier in the same run have no row yet; they are named by their decision's index. */
export function pendingFactId(decisionIndex: number): string {
  return `pending-${decisionIndex}`;
}

function clamp(confidence: number): number {
  return Number.isFinite(confidence) ? Math.min(1, Math.max(0, Math.round(confidence * 100) / 100)) : 0;
}
