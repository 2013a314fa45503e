import { describe, expect, it } from 'vitest';
import { OfflineProvider } from '../../src/llm/offline-provider.ts';
import type { PromotionRequest, TurnRequest } from '../../src/llm/provider.ts';

const provider = new OfflineProvider();
const thread = { subject: 'Invoice #4471', summary: '', openItems: [], currentIntent: '', tags: [], pinnedItems: [], status: 'open' };

function turn(text: string, overrides: Partial<TurnRequest> = {}): TurnRequest {
  return {
    prompt: { system: 's', user: 'u' },
    thread,
    profile: null,
    emails: [
      { messageId: '<m@x>', fromName: 'Alice Okafor', fromAddress: 'alice@example.com', date: new Date('2026-11-02T09:00:00Z'), text },
    ],
    supportName: 'Acme Support',
    summaryTokenCap: 100,
    ...overrides,
  };
}

describe('the offline provider (rules, not a model)', () => {
  it('acknowledges, restates the requests as open items, and is deterministic', async () => {
    const text = 'Hi, invoice #4471 charged me twice. Could you check it? Please only call me in the evenings.';
    const a = await provider.messageTurn(turn(text));
    const b = await provider.messageTurn(turn(text));
    expect(a).toEqual(b);
    if (!a.ok) throw new Error('offline provider failed');
    expect(a.value.openItems).toEqual(['Could you check it?']);
    expect(a.value.reply.body).toMatch(/^Hello Alice,/);
    expect(a.value.reply.body).toContain('- Could you check it?');
    expect(a.value.currentIntent).toBe('billing_question');
    expect(a.value.reply.needsHuman).toBe(false);
  });

  it('flags refunds and legal threats for a human, and recognises a resolved thread', async () => {
    const refund = await provider.messageTurn(turn('I want a refund or I will contact my lawyer.'));
    expect(refund.ok && refund.value.reply.needsHuman).toBe(true);
    const done = await provider.messageTurn(turn('Thanks, that fixed it!'));
    expect(done.ok && done.value.resolved).toBe(true);
  });

  it('proposes facts only from explicit phrases, quoting them literally', async () => {
    const request: PromotionRequest = {
      prompt: { system: 's', user: 'u' },
      thread,
      messages: [
        {
          messageId: '<m1@x>',
          date: new Date('2026-11-02T09:00:00Z'),
          text: 'My name is Alice Okafor. Please only call me in the evenings. I am so frustrated!',
        },
      ],
      replies: [
        {
          messageId: '<r1@x>',
          date: new Date('2026-11-02T10:00:00Z'),
          text: "We'll refund the duplicate charge by Friday.",
          author: 'agent',
        },
      ],
      commitments: [],
    };
    const outcome = await provider.threadPromotion(request);
    if (!outcome.ok) throw new Error('offline provider failed');
    expect(outcome.value.facts.map((f) => [f.key, f.value, f.category])).toEqual([
      ['preferred_contact_time', 'evenings', 'preference'],
      ['name', 'Alice Okafor', 'identity'],
      ['sentiment', 'i am so frustrated', 'sentiment'],
    ]);
    for (const fact of outcome.value.facts) expect(request.messages[0]!.text).toContain(fact.evidence);
    expect(outcome.value.commitments).toEqual([
      { text: "We'll refund the duplicate charge by Friday", due: 'by Friday', sourceMessageId: '<r1@x>' },
    ]);
  });
});
