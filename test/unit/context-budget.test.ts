import { describe, expect, it } from 'vitest';
import { assembleTurnContext, type TurnContextInput } from '../../src/memory/context.ts';
import { CONTEXT_PARTS, CONTEXT_SHARES, contextShares, fitNotes, fitPinned } from '../../src/memory/context-budget.ts';
import { countTokens } from '../../src/memory/tokens.ts';
import type { IncomingEmail } from '../../src/memory/types.ts';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 2, 9, minute));
const email = (i: number, text: string, extra: Partial<IncomingEmail> = {}): IncomingEmail => ({
  messageId: `<m${i}@x.example>`,
  fromName: 'Alice',
  fromAddress: 'alice@example.com',
  date: at(i),
  text,
  ...extra,
});

function input(overrides: Partial<TurnContextInput> = {}): TurnContextInput {
  return {
    supportName: 'Acme Support',
    supportAddress: 'support@acme.example',
    profile: {
      entityId: 'e_1',
      name: 'Alice',
      facts: Array.from({ length: 30 }, (_, i) => ({
        key: `remark_${i}`,
        value: `a remark about the customer's setup, number ${i} `.repeat(4),
        category: 'situation' as const,
        confidence: 0.8,
        origin: 'email',
        expiresAt: null,
      })),
      pastThreads: Array.from({ length: 8 }, (_, i) => ({ threadId: `t_${i}`, topic: `old topic ${i} `.repeat(10), closedAt: at(i) })),
      outstandingCommitments: [],
    },
    withheldReason: null,
    thread: {
      subject: 'Export failing',
      summary: 'The customer reported many things. '.repeat(300),
      openItems: Array.from({ length: 10 }, (_, i) => `open question ${i} about the export `.repeat(5)),
      currentIntent: 'bug_report',
      tags: ['export'],
      pinnedItems: Array.from({ length: 10 }, (_, i) => `PIN-${i}-${'x'.repeat(110)}`),
      status: 'open',
    },
    buffer: Array.from({ length: 6 }, (_, i) => ({
      direction: i % 2 === 0 ? ('inbound' as const) : ('outbound' as const),
      author: i % 2 === 0 ? 'customer' : 'agent',
      date: at(i),
      text: `exchange ${i} `.repeat(400),
    })),
    emails: [
      email(50, 'The export still fails. '.repeat(800), { attachmentText: `[file: log.txt, 9 KB, text]\n${'trace line '.repeat(2000)}` }),
    ],
    now: at(59),
    limits: { promptTokenBudget: 4500, summaryTokenCap: 250, messageTokenCap: 1200, bufferTokenCap: 500, attachmentTokenCap: 400 },
    knowledge: {
      tokenCap: 700,
      passages: Array.from({ length: 6 }, (_, i) => ({
        id: `p${i}`,
        documentId: `d${i}`,
        title: `Passage ${i}`,
        titlePath: `Help > Export > Passage ${i}`,
        text: 'How to export your data. '.repeat(60),
        score: 1 / (i + 1),
      })),
    } as unknown as TurnContextInput['knowledge'],
    ...overrides,
  };
}

describe('the context budget’s shares', () => {
  it('add up to the whole budget', () => {
    expect(Object.values(CONTEXT_SHARES).reduce((a, b) => a + b, 0)).toBe(1000);
    expect(Object.keys(CONTEXT_SHARES).sort()).toEqual([...CONTEXT_PARTS].sort());
  });

  it.each([
    [4500, 500, 700, 400, { buffer: 247, knowledge: 697, attachments: 180, newMail: 1305 }],
    [4500, 100, 300, 0, { buffer: 100, knowledge: 300, attachments: 0, newMail: 1305 }],
    [9000, 500, 700, 400, { buffer: 495, knowledge: 700, attachments: 360, newMail: 2610 }],
    [1000, 500, 700, 400, { buffer: 55, knowledge: 155, attachments: 40, newMail: 290 }],
  ])('at a budget of %i, a part with its own setting gets the smaller of the two', (budget, buffer, kb, attachments, expected) => {
    const shares = contextShares({
      promptTokenBudget: budget,
      summaryTokenCap: 250,
      messageTokenCap: 1200,
      bufferTokenCap: buffer,
      knowledgeTokenCap: kb,
      attachmentTokenCap: attachments,
    });
    expect(shares).toMatchObject(expected);
    expect(Object.values(shares).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(budget);
  });
});

describe('every part within its share, whatever the thread holds', () => {
  const cases: Array<[string, Partial<TurnContextInput>]> = [
    ['everything far over its share', {}],
    ['a burst of five long emails', { emails: [1, 2, 3, 4, 5].map((i) => email(i, `burst ${i} `.repeat(900))) }],
    ['a burst of twenty short emails', { emails: Array.from({ length: 20 }, (_, i) => email(i, `short note ${i} `.repeat(40))) }],
    ['CJK text everywhere', { emails: [email(1, '导出仍然失败，请帮忙。'.repeat(600))] }],
    ['emoji and combining marks', { emails: [email(1, 'e\u0301'.repeat(3000) + '🙂'.repeat(2000))] }],
    ['a very long Message-ID', { emails: [email(1, 'Hello again.', { messageId: `<${'a'.repeat(900)}@x.example>` })] }],
    [
      'files on every email of a burst',
      { emails: [1, 2, 3].map((i) => email(i, `mail ${i}`, { attachmentText: `[file: f${i}.txt, 1 KB, text]\n${'data '.repeat(900)}` })) },
    ],
    [
      'the smallest default-like budget',
      { limits: { promptTokenBudget: 4500, summaryTokenCap: 250, messageTokenCap: 1200, bufferTokenCap: 500 } },
    ],
    [
      'a larger budget',
      {
        limits: { promptTokenBudget: 12_000, summaryTokenCap: 600, messageTokenCap: 3000, bufferTokenCap: 2000, attachmentTokenCap: 1000 },
      },
    ],
    ['the context withheld', { profile: null, withheldReason: 'the sender failed DMARC', buffer: [] }],
    [
      'a policy with a long tag vocabulary',
      {
        tagVocabulary: Object.fromEntries(
          Array.from({ length: 60 }, (_, i) => [`tag_${i}`, 'when the customer writes about this and that']),
        ),
      },
    ],
  ];

  it.each(cases)('%s', (_name, overrides) => {
    const prompt = assembleTurnContext(input(overrides));
    for (const part of CONTEXT_PARTS) expect(prompt.parts[part].tokens, part).toBeLessThanOrEqual(prompt.parts[part].share);
    const budget = (overrides.limits ?? input().limits).promptTokenBudget;
    expect(prompt.promptTokens).toBeLessThanOrEqual(budget);
    expect(prompt.overBudget).toBe(false);
    expect(prompt.trimmed.filter((t) => t.includes('halved') || t.includes('omitted for'))).toEqual([]);
  });

  it('keeps every pinned identifier findable even when the pins are cut', () => {
    const prompt = assembleTurnContext(input());
    for (let i = 0; i < 10; i++) expect(prompt.user).toContain(`- PIN-${i}-`);
    expect(prompt.trimmed).toContain('pinned items cut to the share');
  });
});

describe('fitting one part', () => {
  it.each([
    [['WS-48213', 'INV-5120'], 150, ['WS-48213', 'INV-5120']],
    [[], 150, []],
    [Array.from({ length: 10 }, (_, i) => `ORDER-${i}`), 150, Array.from({ length: 10 }, (_, i) => `ORDER-${i}`)],
  ])('keeps pins that fit verbatim (%j)', (items, share, expected) => {
    expect(fitPinned(items, share)).toEqual(expected);
  });

  it.each([60, 100, 157, 300])('cuts ten long pins to an equal part of a %i-token share, dropping none', (share) => {
    const items = Array.from({ length: 10 }, (_, i) => `ticket ${i}: ${'a long free-text pin '.repeat(8)}`);
    const fitted = fitPinned(items, share);
    expect(fitted).toHaveLength(10);
    fitted.forEach((p, i) => expect(p.startsWith(`ticket ${i}`)).toBe(true));
    if (share >= 100) expect(fitted.reduce((sum, p) => sum + countTokens(p) + 2, 10)).toBeLessThanOrEqual(share);
  });

  it.each([
    [292, 250],
    [500, 250],
    [150, 250],
    [600, 100],
  ])('keeps the notes under a %i-token share with SUMMARY_TOKEN_CAP %i', (share, cap) => {
    const notes = {
      subject: 'Export',
      summary: 'Old detail. '.repeat(500),
      openItems: Array.from({ length: 10 }, (_, i) => `item ${i} `.repeat(30)),
      currentIntent: 'bug_report',
    };
    const fitted = fitNotes(notes, share, cap);
    expect(fitted.summaryTokens).toBeLessThanOrEqual(cap);
    const itemTokens = fitted.openItems.reduce((sum, i) => sum + countTokens(i) + 2, 0);
    expect(fitted.summaryTokens + itemTokens).toBeLessThanOrEqual(share);
    // In their order: the first items are the ones kept.
    fitted.openItems.forEach((item, i) => expect(item.startsWith(`item ${i} `)).toBe(true));
  });

  it('gives a short summary all it needs and the open items the rest', () => {
    const fitted = fitNotes({ subject: 'x', summary: 'Short.', openItems: ['a', 'b'], currentIntent: '' }, 292, 250);
    expect(fitted).toEqual({ summaryTokens: countTokens('Short.'), openItems: ['a', 'b'] });
  });
});
