import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';

let h: AgentHarness;
beforeAll(async () => {
  // Long enough that the second message always arrives inside the first quiet period, even on a busy machine.
  h = await startAgentHarness({ QUIET_AFTER: '4s', REPLY_MODE: 'draft' });
  h.llm.setFallback((request) =>
    request.schemaName === 'thread_promotion'
      ? { kind: 'json', content: { topic: 'a scheduled promotion', facts: [], commitments: [] } }
      : { kind: 'json', content: turnAnswer({ resolved: JSON.stringify(request.body.messages).includes('all sorted now') }) },
  );
});
afterAll(async () => {
  await h?.close();
});

const runs = (threadId: string) => h.runtime.db.promotionRun.findMany({ where: { threadId }, orderBy: { createdAt: 'asc' } });

describe('when promotion runs', () => {
  it('once per quiet period: every turn pushes the delayed job back, so a busy thread is promoted once, after it goes quiet', async () => {
    const first = await h.ingest(
      customerEmail({ from: 'quiet@customer.example', subject: 'Quiet', body: 'First.', messageId: '<quiet-1@x>' }),
    );
    await waitFor(
      () => h.runtime.db.draft.count({ where: { threadId: first.threadId! } }),
      (n) => n === 1,
      20_000,
      'first draft',
    );
    await h.ingest(
      customerEmail({
        from: 'quiet@customer.example',
        subject: 'Re: Quiet',
        body: 'Second.',
        messageId: '<quiet-2@x>',
        inReplyTo: '<quiet-1@x>',
      }),
    );
    await waitFor(
      () => h.runtime.db.draft.count({ where: { threadId: first.threadId! } }),
      (n) => n === 2,
      20_000,
      'second draft',
    );
    const promoted = await waitFor(
      () => runs(first.threadId!),
      (r) => r.length >= 1,
      30_000,
      'the quiet promotion',
    );
    expect(promoted.map((r) => r.trigger)).toEqual(['quiet']);
    const lastMessage = await h.runtime.db.thread.findUniqueOrThrow({ where: { id: first.threadId! } });
    expect(promoted[0]!.createdAt.getTime()).toBeGreaterThanOrEqual(lastMessage.lastMessageAt.getTime() + 4000);
    expect(lastMessage).toMatchObject({ status: 'closed', topic: 'a scheduled promotion', needsPromotion: false });
  });

  it('at once when a turn reports the thread resolved', async () => {
    const done = await h.ingest(customerEmail({ from: 'resolved@customer.example', subject: 'Fixed', body: 'Thanks, all sorted now.' }));
    const promoted = await waitFor(
      () => runs(done.threadId!),
      (r) => r.length >= 1,
      20_000,
      'the resolved promotion',
    );
    expect(promoted[0]!.trigger).toBe('resolved');
    expect(await h.runtime.db.thread.findUniqueOrThrow({ where: { id: done.threadId! } })).toMatchObject({ status: 'resolved' });
  });

  it('a closed thread that gets new mail opens again and will be promoted again', async () => {
    const thread = await h.runtime.db.thread.findFirstOrThrow({ where: { subject: 'Quiet' } });
    await h.ingest(
      customerEmail({
        from: 'quiet@customer.example',
        subject: 'Re: Quiet',
        body: 'Third.',
        messageId: '<quiet-3@x>',
        inReplyTo: '<quiet-2@x>',
      }),
    );
    expect(await h.runtime.db.thread.findUniqueOrThrow({ where: { id: thread.id } })).toMatchObject({
      status: 'open',
      needsPromotion: true,
    });
    await waitFor(
      () => runs(thread.id),
      (r) => r.length === 2,
      30_000,
      'the second promotion',
    );
  });
});
