import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  commitmentEndingTag,
  decidePromotions,
  endsWithThread,
  policySchema,
  tagLifetime,
  type Candidate,
  type SourceMessage,
} from '../../src/memory/promotion-policy.ts';

const policyJson = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../config/promotion-policy.json'), 'utf8'));
const shipped = policySchema.parse(policyJson);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const said = new Date('2026-11-02T09:00:00Z');

/** The shipped policy with these tag lifetimes instead of its own. */
function withLifetimes(lifetimes: Record<string, unknown>) {
  return policySchema.parse({ ...policyJson, tags: { ...policyJson.tags, lifetimes } });
}

const policy = withLifetimes({
  p0: { ttl: 'resolved', categories: ['situation', 'other'], commitments: true },
  promo: { ttl: '30d' },
  short: { ttl: '12h', categories: ['situation'] },
  contact: { ttl: '7d', categories: ['preference'] },
  watch: { ttl: 'resolved', categories: ['identity'] },
});

const messages = new Map<string, SourceMessage>([
  [
    '<m1@x>',
    { text: 'Our export is failing since this morning. Order #A-99812 never arrived. My name is Pat Lee.', date: said, unverified: false },
  ],
  ['<m2@x>', { text: 'Please only call me in the evenings.', date: said, unverified: false }],
]);

const issue: Candidate = {
  key: 'current_issue',
  value: 'export is failing',
  category: 'situation',
  confidence: 0.9,
  explicit: true,
  evidence: 'Our export is failing since this morning',
  sourceMessageId: '<m1@x>',
};
const order: Candidate = { ...issue, key: 'order_number', value: 'A-99812', evidence: 'Order #A-99812 never arrived' };
const name: Candidate = { ...issue, key: 'name', value: 'Pat Lee', category: 'identity', evidence: 'My name is Pat Lee' };
const contact: Candidate = {
  ...issue,
  key: 'preferred_contact_time',
  value: 'evenings',
  category: 'preference',
  evidence: 'Please only call me in the evenings',
  sourceMessageId: '<m2@x>',
};

function decide(
  candidate: Candidate,
  threadTags: string[],
  options: { now?: Date; threadEnded?: boolean; usePolicy?: typeof policy } = {},
) {
  const [decision] = decidePromotions({
    policy: options.usePolicy ?? policy,
    candidates: [candidate],
    messages,
    existing: [],
    maxActiveFacts: 40,
    now: options.now ?? said,
    threadTags,
    threadEnded: options.threadEnded ?? false,
  });
  return decision!;
}

const expiresIn = (d: ReturnType<typeof decide>) =>
  d.action && d.action.expiresAt ? d.action.expiresAt.getTime() - said.getTime() : d.action ? null : undefined;

describe('tag lifetimes in the policy file', () => {
  it('the shipped policy gives p0 situation facts and commitments the thread’s lifetime', () => {
    expect(shipped.tags.lifetimes['p0']).toEqual(
      expect.objectContaining({ ttl: 'resolved', categories: ['situation', 'other'], commitments: true }),
    );
  });

  it('defaults a lifetime to the situation and other categories, without commitments', () => {
    expect(policy.tags.lifetimes['promo']).toEqual({ ttl: '30d', categories: ['situation', 'other'], commitments: false });
  });

  it('a policy without lifetimes (older files) parses with none', () => {
    const old = policySchema.parse({ ...policyJson, tags: { vocabulary: { billing: 'invoices' } } });
    expect(old.tags.lifetimes).toEqual({});
    const bare = { ...policyJson };
    delete bare.tags;
    expect(policySchema.parse(bare).tags.lifetimes).toEqual({});
  });

  it.each([
    ['a word that is not a duration', { ttl: 'forever' }],
    ['a zero duration', { ttl: '0d' }],
    ['null (use the category TTL instead: leave the tag out)', { ttl: null }],
    ['an unknown category', { ttl: '30d', categories: ['billing'] }],
    ['no category at all', { ttl: '30d', categories: [] }],
    ['commitments that is not a boolean', { ttl: 'resolved', commitments: 'yes' }],
  ])('refuses %s', (_label, lifetime) => {
    expect(() => withLifetimes({ p0: lifetime })).toThrow();
  });

  it('refuses a tag that is not snake_case', () => {
    expect(() => withLifetimes({ 'P0-Outage': { ttl: 'resolved' } })).toThrow();
  });
});

describe('tagLifetime', () => {
  it('is nothing for a thread without tags or with tags that have no lifetime', () => {
    expect(tagLifetime(policy, [], 'situation')).toEqual({ ttl: null, untilResolved: null });
    expect(tagLifetime(policy, ['billing', 'bug'], 'situation')).toEqual({ ttl: null, untilResolved: null });
  });

  it('gives the tag’s duration to a category it lists', () => {
    expect(tagLifetime(policy, ['promo'], 'situation').ttl).toEqual({ tag: 'promo', ms: 30 * DAY });
    expect(tagLifetime(policy, ['promo'], 'other').ttl).toEqual({ tag: 'promo', ms: 30 * DAY });
  });

  it('leaves categories the tag does not list alone', () => {
    expect(tagLifetime(policy, ['promo'], 'identity').ttl).toBeNull();
    expect(tagLifetime(policy, ['short'], 'other').ttl).toBeNull();
    expect(tagLifetime(policy, ['p0'], 'preference').untilResolved).toBeNull();
  });

  it('takes the shortest duration when several tags give one, whatever their order', () => {
    expect(tagLifetime(policy, ['promo', 'short'], 'situation').ttl).toEqual({ tag: 'short', ms: 12 * HOUR });
    expect(tagLifetime(policy, ['short', 'promo'], 'situation').ttl).toEqual({ tag: 'short', ms: 12 * HOUR });
  });

  it('reports the thread-long tag beside a duration', () => {
    expect(tagLifetime(policy, ['promo', 'p0'], 'situation')).toEqual({ ttl: { tag: 'promo', ms: 30 * DAY }, untilResolved: 'p0' });
  });

  it('counts a repeated tag once', () => {
    expect(tagLifetime(policy, ['p0', 'p0'], 'situation').untilResolved).toBe('p0');
  });

  it('is not fooled by inherited object keys as tags', () => {
    expect(tagLifetime(policy, ['constructor', 'toString', '__proto__'], 'situation')).toEqual({ ttl: null, untilResolved: null });
  });
});

describe('promotion decisions with tag lifetimes', () => {
  it('keeps the key’s TTL when the thread has no tag with a lifetime', () => {
    expect(expiresIn(decide(issue, ['billing']))).toBe(48 * HOUR);
    expect(expiresIn(decide(order, []))).toBe(90 * DAY);
  });

  it('a tag duration replaces a shorter key TTL (promo: 30d over current_issue’s 48h)', () => {
    const d = decide(issue, ['promo']);
    expect(d.accepted).toBe(true);
    expect(expiresIn(d)).toBe(30 * DAY);
    expect(d.reason).toContain('lives 30d (tag promo)');
  });

  it('a tag duration replaces a longer key TTL too (order_number 90d → 30d)', () => {
    expect(expiresIn(decide(order, ['promo']))).toBe(30 * DAY);
  });

  it('a tag duration gives a lifetime to a category that has none (preference, contact: 7d)', () => {
    expect(expiresIn(decide(contact, []))).not.toBe(7 * DAY);
    expect(expiresIn(decide(contact, ['contact']))).toBe(7 * DAY);
  });

  it('does not touch a category the tag does not list (a name in a promo thread keeps no expiry)', () => {
    const d = decide(name, ['promo']);
    expect(d.accepted).toBe(true);
    expect(expiresIn(d)).toBeNull();
    expect(d.reason).not.toContain('tag');
  });

  it('a shorter TTL proposed by the model still wins over the tag’s', () => {
    expect(expiresIn(decide({ ...issue, ttl: '24h' }, ['promo']))).toBe(24 * HOUR);
  });

  it('a longer TTL proposed by the model is cut to the tag’s', () => {
    expect(expiresIn(decide({ ...issue, ttl: '90d' }, ['short']))).toBe(12 * HOUR);
  });

  it('rejects a fact whose tag lifetime has already run out', () => {
    const d = decide(issue, ['short'], { now: new Date(said.getTime() + 13 * HOUR) });
    expect(d.accepted).toBe(false);
    expect(d.rule).toBe('expired-before-promotion');
    expect(d.reason).toContain('(tag short)');
  });

  it('accepts after the key TTL when the tag’s is longer (a promo situation 3 days later)', () => {
    const later = new Date(said.getTime() + 3 * DAY);
    expect(decide(issue, [], { now: later }).rule).toBe('expired-before-promotion');
    expect(decide(issue, ['promo'], { now: later }).accepted).toBe(true);
  });

  it('records a p0 situation while the thread is open, saying it ends with the thread', () => {
    const d = decide(issue, ['p0']);
    expect(d.accepted).toBe(true);
    expect(expiresIn(d)).toBe(48 * HOUR);
    expect(d.reason).toContain('ends with its thread (tag p0)');
  });

  it('does not record a p0 situation from the pass that closes the thread', () => {
    const d = decide(issue, ['p0'], { threadEnded: true });
    expect(d.accepted).toBe(false);
    expect(d.rule).toBe('expired-before-promotion');
    expect(d.reason).toContain('tagged p0');
  });

  it('still records a name from a p0 thread that is resolved (identity is not listed)', () => {
    expect(decide(name, ['p0'], { threadEnded: true }).accepted).toBe(true);
  });

  it('ends an identity fact with the thread only when a tag lists identity', () => {
    expect(decide(name, ['watch'], { threadEnded: true }).accepted).toBe(false);
    expect(decide(name, ['watch'], { threadEnded: false }).accepted).toBe(true);
  });

  it('a closed thread without such a tag records as before', () => {
    expect(decide(issue, ['billing'], { threadEnded: true }).accepted).toBe(true);
  });

  it('the shipped policy: p0 facts are cut at resolution, billing ones are not', () => {
    expect(decide(issue, ['p0', 'billing'], { threadEnded: true, usePolicy: shipped }).accepted).toBe(false);
    expect(decide(issue, ['billing'], { threadEnded: true, usePolicy: shipped }).accepted).toBe(true);
  });
});

describe('what ends with a thread', () => {
  it('is nothing for a thread without a thread-long tag', () => {
    expect(endsWithThread(policy, ['billing', 'promo']).facts).toEqual([]);
  });

  it('lists the categories a p0 thread’s facts end in, each with its tag', () => {
    expect(endsWithThread(policy, ['billing', 'p0']).facts).toEqual([
      { category: 'situation', tag: 'p0' },
      { category: 'other', tag: 'p0' },
    ]);
  });

  it('joins the categories of several thread-long tags', () => {
    expect(endsWithThread(policy, ['watch', 'p0']).facts.map((f) => f.category)).toEqual(['identity', 'situation', 'other']);
  });

  it('names the tags whose commitments end with the thread (p0, not watch)', () => {
    expect(endsWithThread(policy, []).commitmentTags).toEqual(['p0']);
  });

  it('ends a commitment by the thread’s tags or its own', () => {
    expect(commitmentEndingTag(policy, [], ['p0'])).toBe('p0');
    expect(commitmentEndingTag(policy, ['p0'], ['billing'])).toBe('p0');
    expect(commitmentEndingTag(policy, ['billing'], ['billing'])).toBeNull();
    expect(commitmentEndingTag(policy, [], [])).toBeNull();
  });

  it('does not end commitments for a thread-long tag without `commitments`', () => {
    expect(commitmentEndingTag(policy, ['watch'], ['watch'])).toBeNull();
  });

  it('a duration tag never ends commitments', () => {
    expect(commitmentEndingTag(withLifetimes({ promo: { ttl: '30d', commitments: true } }), ['promo'], ['promo'])).toBeNull();
  });
});
