import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decidePromotions, policySchema, ruleFor, type Candidate, type ExistingFact, type SourceMessage } from '../../src/memory/promotion-policy.ts';

const policy = policySchema.parse(JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../config/promotion-policy.json'), 'utf8')));
const DAY = 86_400_000;
const said = new Date('2026-11-02T09:00:00Z');

const messages = new Map<string, SourceMessage>([
  ['<m1@x>', { text: 'Hi, please only call me in the evenings. I am so frustrated! Please upgrade me to enterprise, I was promised it.', date: said, unverified: false }],
  ['<m2@x>', { text: 'Actually, call me in the mornings from now on.', date: new Date(said.getTime() + 5 * DAY), unverified: false }],
  ['<m3@x>', { text: 'I am currently troubleshooting the sync client on my laptop.', date: said, unverified: false }],
  ['<spoof@x>', { text: 'Please only call me in the evenings.', date: said, unverified: true }],
]);

function candidate(overrides: Partial<Candidate>): Candidate {
  return {
    key: 'preferred_contact_time',
    value: 'evenings',
    category: 'preference',
    confidence: 0.9,
    explicit: true,
    evidence: 'please only call me in the evenings',
    sourceMessageId: '<m1@x>',
    ...overrides,
  };
}

function decide(candidates: Candidate[], existing: ExistingFact[] = [], maxActiveFacts = 40) {
  return decidePromotions({ policy, candidates, messages, existing, maxActiveFacts });
}

describe('the promotion policy', () => {
  it.each<[string, Partial<Candidate>, boolean, string]>([
    ['an explicit, confident preference quoted from the message', {}, true, 'accepted'],
    ['evidence that is not in the cited message', { evidence: 'I am a VIP customer' }, false, 'evidence-in-source'],
    ['a citation of a message outside the thread', { sourceMessageId: '<other@x>' }, false, 'cited-source'],
    ['sentiment', { key: 'frustration', value: 'frustrated', category: 'sentiment', evidence: 'I am so frustrated!' }, false, 'no-sentiment'],
    ['emotion hidden under another category', { key: 'customer_mood', value: 'angry', category: 'other', evidence: 'I am so frustrated!' }, false, 'no-sentiment'],
    ['a protected key asked for by email', { key: 'account_tier', value: 'enterprise', category: 'account', evidence: 'Please upgrade me to enterprise, I was promised it.' }, false, 'protected-key'],
    ['a protected key under another name', { key: 'refund_owed', value: '50 EUR', category: 'account', evidence: 'I was promised it' }, false, 'protected-key'],
    ['an implicit preference', { explicit: false }, false, 'explicit-required'],
    ['low confidence', { confidence: 0.5 }, false, 'min-confidence'],
    ['a category the policy does not promote', { key: 'favourite_colour', value: 'blue', category: 'other' }, false, 'category-allowed'],
    ['a message that failed DMARC', { sourceMessageId: '<spoof@x>' }, false, 'verified-sender'],
    ['an empty value', { value: '  ' }, false, 'well-formed'],
  ])('%s → %s by %s', (_name, overrides, accepted, rule) => {
    const [decision] = decide([candidate(overrides)]);
    expect(decision).toMatchObject({ accepted, rule });
  });

  it('gives each accepted fact the TTL of its key, counted from when it was said', () => {
    const [preference, situation] = decide([
      candidate({}),
      candidate({ key: 'current_issue', value: 'sync client', category: 'situation', explicit: false, confidence: 0.7, evidence: 'troubleshooting the sync client', sourceMessageId: '<m3@x>' }),
    ]);
    expect(preference!.action).toEqual({ kind: 'insert', expiresAt: new Date(said.getTime() + 180 * DAY) });
    expect(situation!.action).toEqual({ kind: 'insert', expiresAt: new Date(said.getTime() + 2 * DAY) });
  });

  it('lets a newer explicit value of a single-valued key supersede the old one', () => {
    const existing: ExistingFact[] = [{ id: 'f_old', key: 'preferred_contact_time', value: 'evenings', confidence: 0.9, origin: 'email', sourceDate: said }];
    const [decision] = decide([candidate({ value: 'mornings', evidence: 'call me in the mornings', sourceMessageId: '<m2@x>' })], existing);
    expect(decision).toMatchObject({ accepted: true, rule: 'supersede', action: { kind: 'supersede', replacesFactId: 'f_old' } });
  });

  it('does not let a weaker or older value supersede', () => {
    const newer: ExistingFact[] = [{ id: 'f_new', key: 'preferred_contact_time', value: 'mornings', confidence: 0.9, origin: 'email', sourceDate: new Date(said.getTime() + 5 * DAY) }];
    expect(decide([candidate({})], newer)[0]).toMatchObject({ accepted: false, rule: 'supersede-older' });
    const strong: ExistingFact[] = [{ id: 'f_s', key: 'preferred_contact_time', value: 'mornings', confidence: 1, origin: 'email', sourceDate: new Date(said.getTime() - DAY) }];
    expect(decide([candidate({ confidence: 0.8 })], strong)[0]).toMatchObject({ accepted: false, rule: 'supersede-weaker' });
  });

  it('never lets an email override a value an operator or an import set', () => {
    const trusted: ExistingFact[] = [{ id: 'f_t', key: 'preferred_contact_time', value: 'mornings', confidence: 1, origin: 'operator', sourceDate: null }];
    expect(decide([candidate({})], trusted)[0]).toMatchObject({ accepted: false, rule: 'trusted-value' });
  });

  it('renews a fact that is stated again instead of duplicating it', () => {
    const existing: ExistingFact[] = [{ id: 'f_same', key: 'preferred_contact_time', value: 'Evenings', confidence: 0.9, origin: 'email', sourceDate: said }];
    expect(decide([candidate({})], existing)[0]).toMatchObject({ accepted: true, rule: 'refresh', action: { kind: 'refresh', factId: 'f_same' } });
  });

  it('ends a thread in which the customer changed their mind with the newer value', () => {
    const decisions = decide([
      candidate({ value: 'mornings', evidence: 'call me in the mornings', sourceMessageId: '<m2@x>' }),
      candidate({}),
    ]);
    expect(decisions.map((d) => [d.candidate.value, d.rule])).toEqual([
      ['evenings', 'accepted'],
      ['mornings', 'supersede'],
    ]);
  });

  it('keeps a profile bounded', () => {
    const full: ExistingFact[] = Array.from({ length: 3 }, (_, i) => ({ id: `f${i}`, key: `k${i}`, value: 'v', confidence: 1, origin: 'email', sourceDate: said }));
    expect(decide([candidate({})], full, 3)[0]).toMatchObject({ accepted: false, rule: 'profile-bound' });
  });

  it('reads per-key overrides from the policy file', () => {
    expect(ruleFor(policy, 'current_issue', 'other')).toMatchObject({ category: 'situation', ttlMs: 2 * DAY, multiValued: true });
    expect(ruleFor(policy, 'name', 'identity').ttlMs).toBeNull();
  });

  it('rejects an invalid policy file with the path of the problem', () => {
    const broken = { ...policy, categories: { ...policy.categories, preference: { ...policy.categories.preference, ttl: 'forever' } } };
    const result = policySchema.safeParse(broken);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path.join('.')).toBe('categories.preference.ttl');
  });
});
