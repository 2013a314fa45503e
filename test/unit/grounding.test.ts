import { describe, expect, it } from 'vitest';
import { checkGrounding, type GroundingInput } from '../../src/memory/grounding.ts';

const passage = {
  id: 'kp_1',
  titlePath: 'Refunds > Refund window',
  text: 'You can ask for a refund within 14 days of a payment. Refunds take 5 to 10 business days to appear.',
};
const base: GroundingInput = {
  body: '',
  citations: [],
  passages: [passage],
  facts: [{ key: 'plan', value: 'Business' }],
  messages: [{ messageId: '<m1@customer.example>', text: 'Invoice 5521 shows 49.90 EUR. What is your refund window?' }],
  notes: '',
};
const rules = (input: Partial<GroundingInput>) => checkGrounding({ ...base, ...input }).findings.map((f) => f.rule);

describe('the grounding gate', () => {
  it('passes a claim whose citation quotes the cited passage (folded: case, punctuation)', () => {
    const sentence = 'You can ask for a refund within 14 days of a payment.';
    const review = checkGrounding({
      ...base,
      body: `Hello,\n\n${sentence}\n\nAcme Support`,
      citations: [{ sentence, source: 'kb:kp_1', quote: 'you can ask for a REFUND within 14 days of a payment' }],
    });
    expect(review).toEqual({ findings: [], citedPassages: ['kp_1'] });
  });

  it('flags a quote that is not in the cited source, and a source the prompt did not hold', () => {
    const sentence = 'Refunds are possible within 60 days.';
    expect(rules({ body: sentence, citations: [{ sentence, source: 'kb:kp_1', quote: 'within 60 days' }] })).toEqual([
      'citation-not-in-source',
      'unsupported-claim',
    ]);
    expect(rules({ body: sentence, citations: [{ sentence, source: 'kb:kp_9', quote: 'within 60 days' }] })).toEqual([
      'citation-unknown-source',
      'unsupported-claim',
    ]);
    expect(rules({ body: sentence, citations: [{ sentence, source: 'web:example.com', quote: 'x' }] })).toEqual([
      'citation-unknown-source',
      'unsupported-claim',
    ]);
  });

  it('flags a cited claim whose number is not in the cited source', () => {
    const sentence = 'You can ask for a refund within 30 days of a payment.';
    expect(rules({ body: sentence, citations: [{ sentence, source: 'kb:kp_1', quote: 'You can ask for a refund' }] })).toEqual([
      'unsupported-claim',
    ]);
  });

  it('flags uncited prices, numbers, steps and policies', () => {
    expect(rules({ body: 'The Business plan costs 19 EUR per seat.' })).toEqual(['unsupported-claim']);
    expect(rules({ body: 'Go to Settings and click Export.' })).toEqual(['unsupported-claim']);
    expect(rules({ body: 'Our policy does not cover this.' })).toEqual(['unsupported-claim']);
    expect(rules({ body: 'Gehen Sie zu Einstellungen > Export.' })).toEqual(['unsupported-claim']);
    expect(rules({ body: '設定から変更できます。' })).toEqual(['unsupported-claim']);
  });

  it('lets a reply restate the customer, acknowledge, or cite the profile and the email', () => {
    expect(rules({ body: 'Hello Sam,\n\nthank you for your email. A colleague will follow up.\n\nAcme Support' })).toEqual([]);
    expect(rules({ body: 'We see that invoice 5521 shows 49.90 EUR.' })).toEqual([]);
    expect(rules({ body: 'We are tracking:\n- What is your refund window?' })).toEqual([]);
    const onPlan = 'Your workspace is on the Business plan, which includes 3 admins.';
    expect(rules({ body: onPlan, citations: [{ sentence: onPlan, source: 'profile:plan', quote: 'Business' }] })).toEqual([
      'unsupported-claim',
    ]);
    const invoice = 'Invoice 5521 shows 49.90 EUR, as you wrote.';
    expect(
      rules({
        body: invoice,
        citations: [{ sentence: invoice, source: 'message:m1@customer.example', quote: 'Invoice 5521 shows 49.90 EUR' }],
      }),
    ).toEqual([]);
  });

  it('reads a capped body and reports at most ten findings', () => {
    const body = Array.from({ length: 50 }, (_, i) => `Step ${i + 100}: click here.`).join('\n');
    expect(checkGrounding({ ...base, body }).findings).toHaveLength(10);
  });
});

describe('a citation must quote a substantive span that supports its sentence (issue 27, finding 5)', () => {
  const sentence = 'You can ask for a refund within 14 days of a payment.';
  it.each([
    ['a single function word', 'to'],
    ['two function words', 'of a'],
    ['one content word', 'refund'],
    ['a short span', 'a refund'],
  ])('flags %s', (_name, quote) => {
    expect(rules({ body: sentence, citations: [{ sentence, source: 'kb:kp_1', quote }] })).toEqual([
      'citation-not-substantive',
      'unsupported-claim',
    ]);
  });

  it('flags an empty quote or one of punctuation only as not in the source', () => {
    for (const quote of ['', '...']) {
      expect(rules({ body: sentence, citations: [{ sentence, source: 'kb:kp_1', quote }] })).toEqual([
        'citation-not-in-source',
        'unsupported-claim',
      ]);
    }
  });

  it('flags a true quote that does not support the sentence citing it', () => {
    const claim = 'Premium support answers within 14 minutes.';
    const review = checkGrounding({
      ...base,
      body: claim,
      citations: [{ sentence: claim, source: 'kb:kp_1', quote: 'Refunds take 5 to 10 business days to appear' }],
    });
    expect(review.findings.map((f) => f.rule)).toEqual(['citation-not-substantive', 'unsupported-claim']);
    expect(review.findings[0]!.reason).toContain('shares no word with the sentence citing it');
  });

  it.each([
    ['the span itself', sentence, 'ask for a refund within 14 days'],
    ['another inflection of its words', 'Refunds are possible within 14 days of a payment.', 'You can ask for a refund within 14 days'],
    ['its numbers, in another language', 'Les remboursements arrivent en 5 à 10 jours ouvrés.', 'Refunds take 5 to 10 business days'],
    ['a whole profile value, however short', 'Your workspace is on the Business plan.', 'Business'],
  ])('passes %s', (_name, claim, quote) => {
    const source = quote === 'Business' ? 'profile:plan' : 'kb:kp_1';
    expect(rules({ body: claim, citations: [{ sentence: claim, source, quote }] })).toEqual([]);
  });

  it('passes Chinese and Japanese quotes of four characters or more that share characters with the sentence', () => {
    const zh = { id: 'kp_zh', titlePath: '退款', text: '付款后14天内可以申请退款。' };
    const claim = '您可以在付款后14天内申请退款。';
    expect(
      checkGrounding({ ...base, passages: [zh], body: claim, citations: [{ sentence: claim, source: 'kb:kp_zh', quote: '可以申请退款' }] })
        .findings,
    ).toEqual([]);
    expect(
      checkGrounding({
        ...base,
        passages: [zh],
        body: claim,
        citations: [{ sentence: claim, source: 'kb:kp_zh', quote: '退款' }],
      }).findings.map((f) => f.rule),
    ).toContain('citation-not-substantive');
  });
});
