/**
 * Working memory over a long thread, through the real `openai` client and the scripted server:
 * the rolling buffer carries our previous reply into every prompt, an identifier pinned at
 * message 1 is still in the prompt at message 150 although the model never repeats it and its
 * summary is rewritten shorter again and again, and the prompt stays flat.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleThreadTurn } from '../../src/app/handle-thread-turn.ts';
import { customerEmail, startAgentHarness, turnAnswer, type AgentHarness } from '../support/agent-harness.ts';
import type { RecordedRequest } from '../support/scripted-llm-server.ts';

const MESSAGES = 150;
// Stated once each, in the first five messages; only message 1's is pinned by the model.
const EARLY = ['WS-48213', 'INV-5120', 'E-4042', 'ops@globex.example', 'https://status.globex.example/incident/77'];

let h: AgentHarness;
beforeAll(async () => {
  h = await startAgentHarness({ SUMMARY_TOKEN_CAP: '120', BUFFER_TOKEN_CAP: '500', REPLY_MODE: 'draft' }, { workers: false });
});
afterAll(async () => {
  await h?.close();
});

const userPrompt = (request: RecordedRequest) => String(request.body.messages.find((m) => m.role === 'user')?.content ?? '');

function bodyOf(n: number): string {
  const early = EARLY[n - 1];
  const detail = early ? ` For reference: ${early}.` : '';
  return `Message ${n}: the sync client still stops at ${n % 5 === 0 ? 'upload' : 'download'}.${detail} Could you check?`;
}

describe('working memory on a long thread', () => {
  it('shows the previous reply in every prompt, keeps the pinned identifier to message 150, and stays flat', async () => {
    // A forgetful model: it pins the workspace ID once, never names it again, and its summary grows every turn.
    h.llm.setFallback((request) => {
      const prompt = userPrompt(request);
      if (request.schemaName === 'summary_compression') {
        // A rewrite that keeps the pinned items (as asked) and the latest state only.
        const pinned = [...prompt.matchAll(/^- (.+)$/gm)].map((m) => m[1]).filter((p) => p !== '(none)' && !p!.startsWith('open'));
        const latest = prompt
          .split(/(?<=\.)\s+/)
          .slice(-2)
          .join(' ');
        return { kind: 'json', content: { summary: `Sync client problem reported repeatedly (${pinned.join(', ')}). ${latest}` } };
      }
      const n = Number(/Message (\d+):[^\n]*\n<<<end email/.exec(prompt)?.[1] ?? 0);
      const previous = /^summary: (.*)$/m.exec(prompt)?.[1] ?? '';
      const summary = `${previous === '(new thread)' ? '' : previous} On message ${n} the client stopped again and the customer asked us to check.`;
      return {
        kind: 'json',
        content: {
          ...turnAnswer({
            body: `Reply ${n}: we are checking the sync client for you.\n\nAcme Support`,
            summary,
            openItems: ['check the sync client'],
          }),
          pin: n === 1 ? ['WS-48213'] : [],
          unpin: [],
        },
      };
    });

    let parent: string | undefined;
    let threadId: string | null = null;
    const promptTokens: number[] = [];
    for (let n = 1; n <= MESSAGES; n++) {
      const messageId = `<wm-${n}@globex.example>`;
      const ingested = await h.ingest(
        customerEmail({
          subject: n === 1 ? 'Sync client stops' : 'Re: Sync client stops',
          body: bodyOf(n),
          messageId,
          ...(parent ? { inReplyTo: parent, references: parent } : {}),
        }),
        { enqueue: false },
      );
      threadId ??= ingested.threadId;
      expect(ingested.threadId).toBe(threadId);
      const outcome = await handleThreadTurn(h.runtime.turnDeps(), threadId!);
      expect(outcome.kind).toBe('drafted');
      promptTokens.push(outcome.kind === 'drafted' ? outcome.promptTokens : 0);
      parent = messageId;
    }

    const turns = h.llm.requests.filter((r) => r.schemaName === 'message_turn');
    const rewrites = h.llm.requests.filter((r) => r.schemaName === 'summary_compression');
    expect(turns).toHaveLength(MESSAGES);
    // The agent sees what it said last, in every prompt after the first.
    turns.forEach((request, i) => {
      if (i > 0) expect(userPrompt(request)).toContain(`Reply ${i}: we are checking`);
    });
    expect(userPrompt(turns[0]!)).not.toContain('RECENT EXCHANGES');

    // The summary outgrew its cap and the model rewrote it; the rewrite was asked to keep the pin.
    expect(rewrites.length).toBeGreaterThan(0);
    for (const rewrite of rewrites) expect(userPrompt(rewrite)).toContain('- WS-48213');

    // Message 1's identifier is still pinned at message 150, though the model never repeated it.
    const last = userPrompt(turns.at(-1)!);
    expect(last).toMatch(/pinned items[^\n]*\n- WS-48213/);
    const thread = await h.runtime.db.thread.findUniqueOrThrow({ where: { id: threadId! } });
    expect(thread.pinnedItems).toEqual(['WS-48213']);

    // Flat: the largest prompt is within 10 % of the 10th.
    expect(Math.max(...promptTokens)).toBeLessThanOrEqual(promptTokens[9]! * 1.1);

    const surviving = EARLY.filter((id) => last.includes(id));
    // The figure docs/memory.md "Context and token budget" quotes.
    console.info(
      `working memory, ${MESSAGES} messages: early identifiers in the last prompt ${surviving.length}/${EARLY.length} (${surviving.join(', ')}); ` +
        `extra summary rewrites ${rewrites.length} (${(rewrites.length / MESSAGES).toFixed(3)} per turn); prompt tokens 10th ${promptTokens[9]}, max ${Math.max(...promptTokens)}, last ${promptTokens.at(-1)}`,
    );
  }, 300_000);
});
