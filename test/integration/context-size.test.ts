import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleThreadTurn } from '../../src/app/handle-thread-turn.ts';
import { countTokens } from '../../src/memory/tokens.ts';
import { customerEmail, startAgentHarness, turnAnswer, type AgentHarness } from '../support/agent-harness.ts';

let h: AgentHarness;
beforeAll(async () => {
  h = await startAgentHarness({ SUMMARY_TOKEN_CAP: '200', REPLY_MODE: 'draft' }, { workers: false });
});
afterAll(async () => {
  await h?.close();
});

describe('context size', () => {
  it('does not grow with the length of the thread: the 50th prompt is no larger than the 10th (the buffer full), beyond the new message', async () => {
    // A verbose model that never stops writing: summaries start long and grow every turn, open items pile up.
    let history = 'The customer ordered a standing desk and two monitor arms in October and reports that the delivery is late. '.repeat(12);
    h.llm.setFallback((_request, index) => {
      history += ` On turn ${index} the customer added another detail about order ${1000 + index} and asked for an update.`;
      return {
        kind: 'json',
        content: turnAnswer({
          summary: history,
          openItems: Array.from({ length: 12 + index }, (_, i) => `open item ${i} for turn ${index}`),
        }),
      };
    });
    const prompts: Array<{ tokens: number; messageTokens: number; text: string }> = [];
    let parent: string | undefined;
    let threadId: string | null = null;
    for (let n = 1; n <= 50; n++) {
      const body = `Message ${n}: ${'details '.repeat(n % 7)}still waiting for order ${1000 + n}.`;
      const messageId = `<ctx-${n}@example.com>`;
      const ingested = await h.ingest(
        customerEmail({
          subject: n === 1 ? 'Order status' : 'Re: Order status',
          body,
          messageId,
          ...(parent ? { inReplyTo: parent, references: parent } : {}),
        }),
        { enqueue: false },
      );
      threadId ??= ingested.threadId;
      expect(ingested.threadId).toBe(threadId);
      const outcome = await handleThreadTurn(h.runtime.turnDeps(), threadId!);
      expect(outcome.kind).toBe('drafted');
      const turn = await h.runtime.db.turn.findFirstOrThrow({ where: { threadId: threadId! }, orderBy: { startedAt: 'desc' } });
      prompts.push({ tokens: turn.promptTokens, messageTokens: countTokens(ingested.text), text: turn.prompt ?? '' });
      parent = messageId;
    }
    // Beyond the customer's own words (the new message and the two before it, in the buffer), nothing grows.
    const ownWords = (n: number) => prompts.slice(n - 4, n).reduce((sum, p) => sum + p.messageTokens, 0);
    const tenth = prompts[9]!;
    const fiftieth = prompts[49]!;
    // 2 % for numbers ("turn 49", "order 1047") that tokenize longer than "turn 9".
    expect(fiftieth.tokens - ownWords(50)).toBeLessThanOrEqual((tenth.tokens - ownWords(10)) * 1.02);
    // Never the transcript: the buffer holds the last exchanges; older messages live only in the summary.
    expect(fiftieth.text).toContain('Message 50:');
    expect(fiftieth.text).toContain('Message 49:');
    // At most six messages: drafts superseded by a newer turn were never sent, so they are not
    // quoted as our replies, and the share holds customer messages 44–49 at most.
    expect(fiftieth.text).not.toContain('Message 43:');
    expect(fiftieth.text).not.toContain('Message 1:');
    expect(Math.max(...prompts.map((p) => p.tokens))).toBeLessThanOrEqual(Number(h.env['PROMPT_TOKEN_BUDGET'] ?? 3000));
  }, 120_000);
});
