/**
 * The promotion policy: which candidate facts from a thread cross into the durable profile. Data
 * (config/promotion-policy.json, validated here) plus small pure functions. Every candidate gets a
 * decision naming the rule that decided it, accepted or not (DECISION_RULES, in order). Email may
 * set only allow-listed keys; a key or value naming a protected concept (plan, refund, credit,
 * price, VIP, approval...) is refused; the value must be supported by the evidence quote under the
 * key's value rule (src/memory/value-evidence.ts). Operators and imports (src/app/profile-admin.ts)
 * do not go through decidePromotions and may set any key.
 */
import { z } from 'zod';
import { parseDuration } from '../duration.ts';
import { FACT_CATEGORIES, type FactCategory } from './types.ts';
import { snakeCase } from './thread-state.ts';
import { containsFolded, firstTerm, foldedTerm, foldText } from './text-fold.ts';
import { checkValue, cleanValue, moneyIn, VALUE_RULES } from './value-evidence.ts';
import { holdsSensitive, maskText } from '../mail/sensitive-values.ts';

const durationOrNull = z.union([
  z.null(),
  z.string().refine((v) => parseDuration(v) !== null, { message: 'not a duration like 48h or 180d' }),
]);

const snakeKey = z.string().regex(/^[a-z][a-z0-9_]*$/, 'keys are snake_case');
const categoryEnum = z.enum(FACT_CATEGORIES as unknown as [FactCategory, ...FactCategory[]]);

const categoryRuleSchema = z.object({
  allowed: z.boolean(),
  minConfidence: z.number().min(0).max(1),
  requireExplicit: z.boolean(),
  ttl: durationOrNull,
  multiValued: z.boolean(),
});

/** One allow-listed key: its category, how its value is checked, the other spellings a model uses. */
const keyRuleSchema = categoryRuleSchema.partial().extend({
  category: categoryEnum,
  value: z.enum(VALUE_RULES).default('contains'),
  vocabulary: z.string().optional(),
  aliases: z.array(snakeKey).default([]),
  why: z.string().optional(),
});

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

const conceptSchema = z.object({
  concept: z.string().min(1),
  keyTerms: z.array(z.string().min(1)),
  valueTerms: z.array(z.string().min(1)),
  valueExcept: z.array(z.string().min(1)).default([]),
});

/** `resolved`: the tag's items end when their thread is resolved or closed. */
export const UNTIL_RESOLVED = 'resolved';

/**
 * A tag's own lifetime for the facts (of the listed categories) learnt in a thread carrying it: a
 * duration that replaces the key's and category's TTL, or `resolved` (they expire when the thread
 * is resolved or closed, and so do its open commitments when `commitments` is true).
 */
const tagLifetimeSchema = z.object({
  ttl: z.string().refine((v) => v === UNTIL_RESOLVED || (parseDuration(v) ?? 0) > 0, {
    message: `"${UNTIL_RESOLVED}" or a duration like 48h or 30d`,
  }),
  categories: z.array(categoryEnum).min(1).default(['situation', 'other']),
  commitments: z.boolean().default(false),
  why: z.string().optional(),
});

const vocabularyEntrySchema = z.object({ values: z.array(z.string().min(1)).min(1), evidence: z.array(z.string().min(1)).min(1) });

/**
 * Every rule a promotion decision can name, in the order they are tried. The policy file must list
 * the same order and explain each (and the trusted-path rules) under `rules`, so the file an
 * operator reads is the truth.
 */
export const DECISION_RULES = [
  'well-formed',
  'sensitive-value',
  'cited-source',
  'evidence-in-source',
  'evidence-bounded',
  'verified-sender',
  'no-sentiment',
  'protected-key',
  'key-not-allowed',
  'protected-value',
  'value-format',
  'value-in-evidence',
  'category-allowed',
  'explicit-required',
  'min-confidence',
  'expired-before-promotion',
  'refresh',
  'trusted-value',
  'supersede-weaker',
  'supersede-older',
  'supersede',
  'profile-bound',
  'accepted',
] as const;
export type DecisionRule = (typeof DECISION_RULES)[number];

/** Rules recorded by the trusted paths (src/app/profile-admin.ts), documented in the same file. */
const TRUSTED_RULES = ['operator-set', 'trusted-import', 'operator-delete', 'merged-on-link'] as const;

export const policySchema = z
  .object({
    version: z.string().min(1),
    description: z.string().optional(),
    rules: z.object({ why: z.string().optional(), order: z.array(z.string()), meaning: z.record(z.string(), z.string().min(1)) }),
    evidence: z.object({
      why: z.string().optional(),
      maxChars: z.number().int().min(20),
      wholeMessageMinChars: z.number().int().min(0),
      wholeMessageShare: z.number().min(0).max(1),
    }),
    valueRules: z.object({ summaryMinShare: z.number().min(0).max(1) }).catchall(z.union([z.string(), z.number()])),
    keysWhy: z.string().optional(),
    keys: z.record(snakeKey, keyRuleSchema),
    protectedKeys: z.object({ why: z.string().optional(), keys: z.array(snakeKey) }),
    protectedConcepts: z.object({ why: z.string().optional(), concepts: z.array(conceptSchema).min(1) }),
    emotionKeys: z.object({ why: z.string().optional(), patterns: z.array(regexSource) }),
    vocabularies: z.object({ why: z.string().optional(), lists: z.record(z.string(), z.record(z.string(), vocabularyEntrySchema)) }),
    /** Thread tags offered to the model (tag → when it applies); free snake_case tags are allowed too. */
    tags: z
      .object({
        why: z.string().optional(),
        vocabulary: z.record(snakeKey, z.string().min(1).max(200)),
        lifetimesWhy: z.string().optional(),
        /** Per-tag lifetimes: a duration overriding the category's TTL, or `resolved` (ends with its thread). */
        lifetimes: z.record(snakeKey, tagLifetimeSchema).default({}),
      })
      .default({ vocabulary: {}, lifetimes: {} }),
    categories: z.object(
      Object.fromEntries(FACT_CATEGORIES.map((c) => [c, categoryRuleSchema])) as Record<FactCategory, typeof categoryRuleSchema>,
    ),
  })
  .superRefine((policy, ctx) => {
    if (policy.rules.order.join(' ') !== DECISION_RULES.join(' ')) {
      ctx.addIssue({ code: 'custom', path: ['rules', 'order'], message: `must be exactly: ${DECISION_RULES.join(', ')}` });
    }
    for (const rule of [...DECISION_RULES, ...TRUSTED_RULES]) {
      if (!policy.rules.meaning[rule])
        ctx.addIssue({ code: 'custom', path: ['rules', 'meaning', rule], message: 'every rule must be explained' });
    }
    const seen = new Map<string, string>();
    for (const [key, rule] of Object.entries(policy.keys)) {
      for (const name of [key, ...rule.aliases]) {
        const concept =
          keyConcept(policy.protectedConcepts.concepts, name) ?? (policy.protectedKeys.keys.includes(name) ? 'protectedKeys' : null);
        if (concept) ctx.addIssue({ code: 'custom', path: ['keys', key], message: `${name} names the protected concept "${concept}"` });
        const owner = seen.get(name);
        if (owner) ctx.addIssue({ code: 'custom', path: ['keys', key], message: `${name} is already used by ${owner}` });
        seen.set(name, key);
      }
      if (rule.vocabulary && !Object.hasOwn(policy.vocabularies.lists, rule.vocabulary)) {
        ctx.addIssue({ code: 'custom', path: ['keys', key, 'vocabulary'], message: `no vocabulary ${rule.vocabulary}` });
      }
    }
  });

export type PromotionPolicy = z.infer<typeof policySchema>;
type Concept = z.infer<typeof conceptSchema>;

export interface EffectiveRule {
  category: FactCategory;
  allowed: boolean;
  minConfidence: number;
  requireExplicit: boolean;
  ttlMs: number | null;
  multiValued: boolean;
}

/** The effective rule of a key: its own settings over its category's (`category` is used for unlisted keys). */
export function ruleFor(policy: PromotionPolicy, key: string, category: FactCategory): EffectiveRule {
  const keyRule = policy.keys[key];
  const effectiveCategory = keyRule?.category ?? category;
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

/** A tag's duration replacing the key's and category's TTL (the shortest when several tags give one). */
export interface TagTtl {
  tag: string;
  ms: number;
}

/**
 * The per-tag lifetime that applies to a fact of `category` learnt in a thread carrying `tags`:
 * the shortest tag duration (replacing the key's and category's TTL), and the first tag (in the
 * thread's order) whose facts end with the thread. Tags without a lifetime, or whose lifetime
 * lists other categories, change nothing.
 */
export function tagLifetime(
  policy: PromotionPolicy,
  tags: readonly string[],
  category: FactCategory,
): { ttl: TagTtl | null; untilResolved: string | null } {
  let ttl: TagTtl | null = null;
  let untilResolved: string | null = null;
  for (const tag of new Set(tags)) {
    const lifetime = Object.hasOwn(policy.tags.lifetimes, tag) ? policy.tags.lifetimes[tag] : undefined;
    if (!lifetime || !lifetime.categories.includes(category)) continue;
    if (lifetime.ttl === UNTIL_RESOLVED) {
      untilResolved ??= tag;
      continue;
    }
    const ms = parseDuration(lifetime.ttl);
    if (ms !== null && ms > 0 && (ttl === null || ms < ttl.ms)) ttl = { tag, ms };
  }
  return { ttl, untilResolved };
}

/**
 * What ends when a thread carrying `threadTags` is resolved or closed: the categories of the
 * email-learnt facts it taught (each with the tag that ends it), and whether its open commitments
 * end too (a commitment also by its own tags, set when it was promoted). Empty when no tag of the
 * thread has a `resolved` lifetime.
 */
export function endsWithThread(
  policy: PromotionPolicy,
  threadTags: readonly string[],
): { facts: Array<{ category: FactCategory; tag: string }>; commitmentTags: string[] } {
  const facts = FACT_CATEGORIES.flatMap((category) => {
    const tag = tagLifetime(policy, threadTags, category).untilResolved;
    return tag ? [{ category, tag }] : [];
  });
  const commitmentTags = Object.entries(policy.tags.lifetimes)
    .filter(([, lifetime]) => lifetime.ttl === UNTIL_RESOLVED && lifetime.commitments)
    .map(([tag]) => tag);
  return { facts, commitmentTags };
}

/** The tag that ends an open commitment with its thread: one of its own tags or the thread's; null if none. */
export function commitmentEndingTag(
  policy: PromotionPolicy,
  commitmentTags: readonly string[],
  threadTags: readonly string[],
): string | null {
  const ending = new Set(endsWithThread(policy, threadTags).commitmentTags);
  return [...commitmentTags, ...threadTags].find((t) => ending.has(t)) ?? null;
}

/** The allow-listed key a (snake_case) key or one of its aliases stands for, or null. */
function allowedKey(policy: PromotionPolicy, key: string): string | null {
  if (Object.hasOwn(policy.keys, key)) return key;
  return Object.entries(policy.keys).find(([, rule]) => rule.aliases.includes(key))?.[0] ?? null;
}

function termBody(term: string): { body: string; stem: boolean } {
  return term.endsWith('*') ? { body: term.slice(0, -1), stem: true } : { body: term, stem: false };
}

/**
 * The protected concept a snake_case key names, by its parts: a part equal to a term (or the
 * term plus "s"), starting with a stem ("refund*"), or, for terms of 5+ letters, containing it
 * ("subscriptionlevel"). Null if none.
 */
function keyConcept(concepts: readonly Concept[], key: string): string | null {
  const parts = key.split('_').filter(Boolean);
  const joined = parts.join('');
  for (const concept of concepts) {
    for (const term of concept.keyTerms) {
      const { body, stem } = termBody(term);
      if (parts.some((p) => p === body || p === `${body}s` || (stem && p.startsWith(body)))) return concept.concept;
      if (body.length >= 5 && joined.includes(body)) return concept.concept;
    }
  }
  return null;
}

/** Whether email may never set this key: it is listed in `protectedKeys` or names a protected concept. */
export function isProtectedKey(policy: PromotionPolicy, key: string): boolean {
  return policy.protectedKeys.keys.includes(key) || keyConcept(policy.protectedConcepts.concepts, key) !== null;
}

/** What protected thing a value asserts ("refund (refund)", "money ($5000)"), or null. */
function valueConcept(policy: PromotionPolicy, value: string): string | null {
  const money = moneyIn(value);
  if (money) return `an amount of money or a percentage (${money})`;
  const folded = foldText(value);
  for (const concept of policy.protectedConcepts.concepts) {
    let text = ` ${folded} `;
    for (const except of concept.valueExcept) text = text.replaceAll(` ${foldedTerm(except)} `, ' ');
    const term = firstTerm(text.trim(), concept.valueTerms);
    if (term) return `${concept.concept} ("${term.replace(/\*$/, '')}")`;
  }
  return null;
}

function isEmotionKey(policy: PromotionPolicy, key: string): boolean {
  return policy.emotionKeys.patterns.some((p) => new RegExp(p, 'i').test(key));
}

function vocabularySupports(policy: PromotionPolicy, name: string | undefined, value: string, evidence: string): boolean {
  const vocabulary = name ? policy.vocabularies.lists[name] : undefined;
  if (!vocabulary) return false;
  const wanted = foldText(value);
  const folded = foldText(evidence);
  return Object.entries(vocabulary).some(
    ([canonical, entry]) =>
      [canonical, ...entry.values].some((v) => foldedTerm(v) === wanted) && firstTerm(folded, entry.evidence) !== null,
  );
}

export interface Candidate {
  key: string;
  value: string;
  category: string;
  confidence: number;
  explicit: boolean;
  evidence: string;
  sourceMessageId: string;
  /** A lifetime the model proposes ("48h", "30d"): used only when shorter than the policy's. */
  ttl?: string | null;
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
  rule: DecisionRule;
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
  /** When the decision is made: a fact already past its lifetime then is never accepted. */
  now: Date;
  /** The thread's tags: a tag's lifetime in the policy (`tags.lifetimes`) replaces the TTL. */
  threadTags?: readonly string[];
  /** The thread is resolved or closed (or this pass closes it): facts that end with it are not recorded. */
  threadEnded?: boolean;
}

/** Quote length after collapsing whitespace: what the `evidence` limits count. */
const quoteLength = (text: string): number => text.replace(/\s+/g, ' ').trim().length;

/**
 * Decides every candidate. Candidates are considered in the order their source messages were
 * written, so a customer who changes their mind in one thread ends with the newer value. Each
 * candidate is decided by the first rule of DECISION_RULES that applies to it.
 */
export function decidePromotions(input: DecideInput): Decision[] {
  const { policy } = input;
  const active = input.existing.map((f) => ({ ...f }));
  const ordered = [...input.candidates].sort(
    (a, b) => (input.messages.get(a.sourceMessageId)?.date.getTime() ?? 0) - (input.messages.get(b.sourceMessageId)?.date.getTime() ?? 0),
  );
  const decisions: Decision[] = [];

  for (const raw of ordered) {
    // camelCase keys ("vipStatus") are split before folding, so their parts are seen.
    const folded = snakeCase(raw.key.replace(/(\p{Ll})(\p{Lu})/gu, '$1_$2'));
    const key = allowedKey(policy, folded) ?? folded;
    const category = (FACT_CATEGORIES as readonly string[]).includes(raw.category) ? (raw.category as FactCategory) : 'other';
    const candidate = { ...raw, key, category, value: cleanValue(raw.value), confidence: clamp(raw.confidence) };
    const source = input.messages.get(raw.sourceMessageId) ?? null;
    const decide = (accepted: boolean, rule: DecisionRule, reason: string, action: FactAction | null = null) => {
      decisions.push({ candidate, accepted, rule, reason, action, sourceDate: source?.date ?? null });
    };

    if (!key || !candidate.value || candidate.value.length > 200) {
      decide(false, 'well-formed', 'key must fold to snake_case ASCII and value be 1-200 characters');
      continue;
    }
    // A masked or a raw sensitive value (a card number, an IBAN, a code, a password, a national
    // ID) never enters the durable profile, whatever key it comes under (sensitive-values.ts).
    if (holdsSensitive(candidate.value) || holdsSensitive(raw.evidence) || holdsSensitive(raw.key)) {
      // The decision is recorded: with the values masked, never as the model wrote them.
      Object.assign(candidate, { key: maskText(candidate.key), value: maskText(candidate.value), evidence: maskText(raw.evidence) });
      decide(false, 'sensitive-value', 'the value or its evidence holds a card number, IBAN, code, password or national ID (or its mask)');
      continue;
    }
    if (!source) {
      decide(false, 'cited-source', `cites ${raw.sourceMessageId || '(nothing)'}, which is not a customer message of this thread`);
      continue;
    }
    const evidence = foldText(raw.evidence);
    if (!evidence || !containsFolded(foldText(source.text), evidence)) {
      decide(false, 'evidence-in-source', 'the evidence does not occur in the cited message (the model cannot invent facts)');
      continue;
    }
    const evidenceLength = quoteLength(raw.evidence);
    const messageLength = quoteLength(source.text);
    if (evidenceLength > policy.evidence.maxChars) {
      decide(false, 'evidence-bounded', `the evidence is ${evidenceLength} characters; a quote is at most ${policy.evidence.maxChars}`);
      continue;
    }
    if (messageLength > policy.evidence.wholeMessageMinChars && evidenceLength >= policy.evidence.wholeMessageShare * messageLength) {
      decide(false, 'evidence-bounded', 'the evidence is (nearly) the whole message, not a quote of the fact');
      continue;
    }
    if (source.unverified) {
      decide(
        false,
        'verified-sender',
        'the cited message is not verified as the customer’s (it failed DMARC, or its Reply-To points elsewhere without a DMARC pass); it promotes nothing',
      );
      continue;
    }
    if (category === 'sentiment' || isEmotionKey(policy, folded) || isEmotionKey(policy, key)) {
      decide(false, 'no-sentiment', 'sentiment and emotion are never promoted; they stay with the thread');
      continue;
    }
    if (isProtectedKey(policy, folded) || isProtectedKey(policy, key)) {
      const concept = keyConcept(policy.protectedConcepts.concepts, folded);
      decide(
        false,
        'protected-key',
        `${folded} is protected${concept ? ` (${concept})` : ''}: only an operator (facts set) or an import may set it, never an email`,
      );
      continue;
    }
    const keyRule = policy.keys[key];
    if (!keyRule) {
      decide(false, 'key-not-allowed', `${folded} is not on the policy's allow-list of keys email may set`);
      continue;
    }
    const asserted = valueConcept(policy, candidate.value);
    if (asserted) {
      decide(false, 'protected-value', `the value asserts ${asserted}; only an operator or an import may record that`);
      continue;
    }
    const check = checkValue(keyRule.value, candidate.value, raw.evidence, policy.valueRules.summaryMinShare);
    if (!check.ok && check.failure === 'format') {
      decide(false, 'value-format', `${key}: ${check.reason}`);
      continue;
    }
    if (!check.ok && !vocabularySupports(policy, keyRule.vocabulary, candidate.value, raw.evidence)) {
      decide(false, 'value-in-evidence', `${key} (${keyRule.value} rule): ${check.reason}`);
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
    const lifetime = tagLifetime(policy, input.threadTags ?? [], rule.category);
    const ttlMs = shorterTtl(lifetime.ttl ? lifetime.ttl.ms : rule.ttlMs, raw.ttl);
    const expiresAt = ttlMs === null ? null : new Date(source.date.getTime() + ttlMs);
    const byTag = lifetime.ttl ? ` (tag ${lifetime.ttl.tag})` : '';
    if (expiresAt !== null && expiresAt <= input.now) {
      decide(
        false,
        'expired-before-promotion',
        `${key} lives ${formatTtl(ttlMs)}${byTag} from ${source.date.toISOString()}: already expired when decided`,
      );
      continue;
    }
    if (lifetime.untilResolved && input.threadEnded) {
      decide(
        false,
        'expired-before-promotion',
        `${rule.category} facts of a thread tagged ${lifetime.untilResolved} live until it is resolved or closed, which it is`,
      );
      continue;
    }
    const lives = [
      ...(lifetime.ttl ? [`lives ${formatTtl(ttlMs)}${byTag}`] : []),
      ...(lifetime.untilResolved ? [`ends with its thread (tag ${lifetime.untilResolved})`] : []),
    ];
    const livesNote = lives.length > 0 ? `; ${lives.join(', ')}` : '';
    const sameKey = active.filter((f) => f.key === key);
    const sameValue = sameKey.find((f) => foldText(f.value) === foldText(candidate.value));
    if (sameValue) {
      decide(true, 'refresh', `already known; its lifetime is renewed${livesNote}`, { kind: 'refresh', factId: sameValue.id, expiresAt });
      continue;
    }
    if (!rule.multiValued && sameKey.length > 0) {
      const current = sameKey[0]!;
      if (current.origin !== 'email') {
        decide(false, 'trusted-value', `${key} was set by an ${current.origin}; an email does not override it`);
        continue;
      }
      if (!raw.explicit || candidate.confidence < current.confidence - 0.05) {
        decide(
          false,
          'supersede-weaker',
          `weaker than the current value "${current.value}" (explicit and at least as confident is required)`,
        );
        continue;
      }
      if (current.sourceDate && source.date <= current.sourceDate) {
        decide(false, 'supersede-older', `older than the current value "${current.value}"`);
        continue;
      }
      decide(true, 'supersede', `newer explicit value replaces "${current.value}"${livesNote}`, {
        kind: 'supersede',
        replacesFactId: current.id,
        expiresAt,
      });
      const index = active.indexOf(current);
      active.splice(index, 1, {
        id: pendingFactId(decisions.length - 1),
        key,
        value: candidate.value,
        confidence: candidate.confidence,
        origin: 'email',
        sourceDate: source.date,
      });
      continue;
    }
    if (active.length >= input.maxActiveFacts) {
      decide(false, 'profile-bound', `the profile already holds ${input.maxActiveFacts} active facts`);
      continue;
    }
    decide(
      true,
      'accepted',
      `meets the ${rule.category} rule (confidence ≥ ${rule.minConfidence}${rule.requireExplicit ? ', explicit' : ''})${livesNote}`,
      {
        kind: 'insert',
        expiresAt,
      },
    );
    active.push({
      id: pendingFactId(decisions.length - 1),
      key,
      value: candidate.value,
      confidence: candidate.confidence,
      origin: 'email',
      sourceDate: source.date,
    });
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

/** The policy's lifetime, or the model's proposal when it is shorter (never longer). */
function shorterTtl(policyMs: number | null, proposed: string | null | undefined): number | null {
  const proposedMs = proposed ? parseDuration(proposed) : null;
  if (proposedMs === null || proposedMs <= 0) return policyMs;
  return policyMs === null ? proposedMs : Math.min(policyMs, proposedMs);
}

function formatTtl(ms: number | null): string {
  if (ms === null) return 'for ever';
  return ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : `${Math.round(ms / 3_600_000)}h`;
}
