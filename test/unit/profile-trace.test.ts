import { describe, expect, it } from 'vitest';
import { assembleTurnContext, type TurnContextInput } from '../../src/memory/context.ts';
import { orderProfileFacts, sharedTags, traceProfileFacts } from '../../src/memory/profile-trace.ts';
import type { ProfileFactView, ProfileState } from '../../src/memory/types.ts';

const now = new Date('2026-11-02T10:00:00Z');
const day = (n: number) => new Date(Date.UTC(2026, 9, n));

function fact(key: string, overrides: Partial<ProfileFactView> = {}): ProfileFactView {
  return { id: `f_${key}`, key, value: `${key} value`, category: 'other', confidence: 0.8, origin: 'email', expiresAt: null, ...overrides };
}

const keys = (facts: readonly ProfileFactView[]) => facts.map((f) => f.key);

describe('sharedTags', () => {
  it('lists the tags both have, once each, in the fact’s order', () => {
    expect(sharedTags(['bug', 'billing', 'bug'], new Set(['billing', 'bug']))).toEqual(['bug', 'billing']);
  });
  it('is empty for a fact without tags or a thread without tags', () => {
    expect(sharedTags(undefined, new Set(['billing']))).toEqual([]);
    expect(sharedTags(['billing'], new Set())).toEqual([]);
  });
});

describe('the order facts are kept in', () => {
  it('keeps operator and imported facts before email-learnt ones, whatever their tags', () => {
    const ordered = orderProfileFacts(
      [
        fact('learnt', { tags: ['billing'], confidence: 1 }),
        fact('set', { origin: 'operator', confidence: 0.1 }),
        fact('imp', { origin: 'import' }),
      ],
      ['billing'],
    );
    expect(keys(ordered).slice(0, 2).sort()).toEqual(['imp', 'set']);
    expect(keys(ordered)[2]).toBe('learnt');
  });

  it('puts a fact sharing a tag before a more recent and more confident one that shares none', () => {
    const ordered = orderProfileFacts(
      [
        fact('fresh', { validFrom: day(30), confidence: 0.99, tags: ['design'] }),
        fact('billing', { validFrom: day(1), confidence: 0.5, tags: ['billing'] }),
      ],
      ['billing'],
    );
    expect(keys(ordered)).toEqual(['billing', 'fresh']);
  });

  it('puts a fact sharing two tags before one sharing one', () => {
    const ordered = orderProfileFacts([fact('one', { tags: ['billing'] }), fact('two', { tags: ['billing', 'p0'] })], ['p0', 'billing']);
    expect(keys(ordered)).toEqual(['two', 'one']);
  });

  it('among equally relevant facts, the most recently stated first', () => {
    const ordered = orderProfileFacts(
      [
        fact('old', { validFrom: day(1), confidence: 0.99 }),
        fact('new', { validFrom: day(20), confidence: 0.6 }),
        fact('mid', { validFrom: day(10) }),
      ],
      [],
    );
    expect(keys(ordered)).toEqual(['new', 'mid', 'old']);
  });

  it('a fact without a date counts as the oldest', () => {
    expect(keys(orderProfileFacts([fact('undated'), fact('dated', { validFrom: day(1) })], []))).toEqual(['dated', 'undated']);
  });

  it('then the most confident, and otherwise keeps the given order', () => {
    const same = day(5);
    const ordered = orderProfileFacts(
      [
        fact('a', { validFrom: same, confidence: 0.7 }),
        fact('b', { validFrom: same, confidence: 0.9 }),
        fact('c', { validFrom: same, confidence: 0.7 }),
      ],
      [],
    );
    expect(keys(ordered)).toEqual(['b', 'a', 'c']);
  });

  it('does not reorder the caller’s array', () => {
    const facts = [fact('a', { validFrom: day(1) }), fact('b', { validFrom: day(2) })];
    orderProfileFacts(facts, []);
    expect(keys(facts)).toEqual(['a', 'b']);
  });

  it('a thread tag matching nothing changes nothing', () => {
    const facts = [fact('a', { validFrom: day(1), tags: ['bug'] }), fact('b', { validFrom: day(2), tags: ['account'] })];
    expect(keys(orderProfileFacts(facts, ['shipping']))).toEqual(['b', 'a']);
  });
});

describe('the inclusion trace', () => {
  const facts = [
    fact('tier', { origin: 'operator' }),
    fact('billing_contact', { tags: ['billing'], validFrom: day(2) }),
    fact('favourite_colour', { tags: ['design'], validFrom: day(20) }),
    fact('old_issue', { expiresAt: new Date('2026-11-01T08:00:00Z') }),
  ];

  it('includes every live fact when the profile fits, saying why it ranks where it does', () => {
    const trace = traceProfileFacts({ facts, currentTags: ['billing'], now, kept: 3, withheldReason: null });
    expect(trace.map((t) => [t.key, t.verdict])).toEqual([
      ['tier', 'included'],
      ['billing_contact', 'included'],
      ['favourite_colour', 'included'],
      ['old_issue', 'left-out'],
    ]);
    expect(trace[0]!.reason).toBe('included: set by an operator, kept before email-learnt facts; the profile fits its share');
    expect(trace[1]!.reason).toBe('included: tag overlap billing; the profile fits its share');
    expect(trace[2]!.reason).toBe('included: no tag shared with this thread; the profile fits its share');
  });

  it('names expired facts with their expiry, never as included', () => {
    const [expired] = traceProfileFacts({ facts, currentTags: [], now, kept: 3, withheldReason: null }).filter(
      (t) => t.key === 'old_issue',
    );
    expect(expired).toMatchObject({ verdict: 'left-out', reason: 'left out: expired 2026-11-01 08:00 UTC', factId: 'f_old_issue' });
  });

  it('says which facts were left out over the profile share, and their rank', () => {
    const trace = traceProfileFacts({ facts, currentTags: ['billing'], now, kept: 2, withheldReason: null });
    expect(trace[1]!.reason).toBe('included: tag overlap billing (ranked 2 of 3)');
    expect(trace[2]).toMatchObject({
      key: 'favourite_colour',
      verdict: 'left-out',
      reason: 'left out: over the profile share (no tag shared with this thread; ranked 3 of 3, 2 kept)',
    });
  });

  it('says the thread has no tags when it has none', () => {
    const trace = traceProfileFacts({ facts: [fact('a')], currentTags: [], now, kept: 0, withheldReason: null });
    expect(trace[0]!.reason).toContain('this thread has no tags');
  });

  it('marks every live fact withheld, with the reason, when disclosure was withheld', () => {
    const trace = traceProfileFacts({ facts, currentTags: ['billing'], now, kept: 0, withheldReason: 'a recipient is not the customer' });
    expect(trace.filter((t) => t.verdict === 'withheld').map((t) => t.key)).toEqual(['tier', 'billing_contact', 'favourite_colour']);
    expect(trace[0]!.reason).toBe('withheld: a recipient is not the customer');
    expect(trace.at(-1)!.verdict).toBe('left-out');
  });

  it('is empty for an empty profile', () => {
    expect(traceProfileFacts({ facts: [], currentTags: ['billing'], now, kept: 0, withheldReason: null })).toEqual([]);
  });

  it('carries a fact without an id as null', () => {
    const [entry] = traceProfileFacts({ facts: [{ ...fact('x'), id: undefined }], currentTags: [], now, kept: 1, withheldReason: null });
    expect(entry!.factId).toBeNull();
  });
});

describe('context assembly records the trace', () => {
  const profile: ProfileState = {
    entityId: 'e_1',
    name: 'Alice',
    facts: [
      fact('tier', { origin: 'operator', value: 'premium' }),
      ...Array.from({ length: 12 }, (_, i) =>
        fact(`note_${i}`, {
          value: `a long remark number ${i} `.repeat(8),
          validFrom: day(i + 1),
          tags: i === 0 ? ['billing'] : ['design'],
        }),
      ),
      fact('gone', { expiresAt: new Date('2026-10-01') }),
    ],
    pastThreads: [],
    outstandingCommitments: [],
  };
  function input(overrides: Partial<TurnContextInput> = {}): TurnContextInput {
    return {
      supportName: 'Acme Support',
      supportAddress: 'support@acme.example',
      profile,
      withheldReason: null,
      thread: { subject: 'Invoice', summary: '', openItems: [], currentIntent: '', tags: ['billing'], pinnedItems: [], status: 'open' },
      buffer: [],
      emails: [{ messageId: '<m1@x>', fromName: null, fromAddress: 'alice@example.com', date: now, text: 'Any news on my invoice?' }],
      now,
      limits: { promptTokenBudget: 4500, summaryTokenCap: 250, messageTokenCap: 1200, bufferTokenCap: 500 },
      ...overrides,
    };
  }

  it('includes every live fact with room to spare, and the expired one is left out', () => {
    // A budget whose profile share (src/memory/context-budget.ts) holds all twelve long remarks.
    const prompt = assembleTurnContext(input({ limits: { ...input().limits, promptTokenBudget: 9000 } }));
    expect(prompt.factTrace.filter((t) => t.verdict === 'included')).toHaveLength(13);
    expect(prompt.factTrace.find((t) => t.key === 'gone')!.reason).toMatch(/^left out: expired/);
  });

  it('agrees with the prompt when the profile is trimmed: included facts are in it, left-out ones are not', () => {
    // The default budget's profile share holds the operator's fact and some of the remarks.
    const prompt = assembleTurnContext(input());
    expect(prompt.parts.profile.tokens).toBeLessThanOrEqual(prompt.parts.profile.share);
    const included = prompt.factTrace.filter((t) => t.verdict === 'included');
    const over = prompt.factTrace.filter((t) => t.reason.startsWith('left out: over the profile share'));
    expect(over.length).toBeGreaterThan(0);
    for (const t of included) expect(prompt.user).toContain(`"${t.key}"`);
    for (const t of over) expect(prompt.user).not.toContain(`"${t.key}"`);
    // The fact sharing the billing tag outlasts the newer design ones; the operator's outlasts all.
    expect(included.map((t) => t.key).slice(0, 2)).toEqual(['tier', 'note_0']);
    // Among the design facts, the newest stay.
    expect(over.map((t) => t.key)).toContain('note_1');
    expect(included.map((t) => t.key)).toContain('note_11');
  });

  it('is empty when the profile is withheld (the turn traces the withheld facts itself)', () => {
    expect(assembleTurnContext(input({ profile: null, withheldReason: 'forged sender' })).factTrace).toEqual([]);
  });
});
