import { Job } from 'bullmq';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { QUEUES } from '../../src/queue/jobs.ts';
import { customerEmail, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import type { RecordedRequest } from '../support/scripted-llm-server.ts';

let h: AgentHarness;

beforeAll(async () => {
  h = await startAgentHarness();
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.llm.reset();
  h.llm.setFallback(() => ({ kind: 'json', content: turnAnswer() }));
});

function userPrompt(request: RecordedRequest): string {
  return String(request.body.messages.find((m) => m.role === 'user')?.content ?? '');
}

async function draftsOf(threadId: string) {
  return h.runtime.db.draft.findMany({ where: { threadId }, orderBy: { createdAt: 'asc' } });
}

describe('the reply worker', () => {
  it('answers a customer email with one structured message_turn call and sends a correctly threaded reply', async () => {
    h.llm.enqueue({
      kind: 'json',
      content: turnAnswer({ body: 'Hello Alice,\n\nThank you, we are looking into the duplicate charge.\n\nAcme Support' }),
    });
    const sentBefore = h.smtp.messages.length;
    const ingested = await h.ingest(
      customerEmail({
        from: 'Alice Okafor <alice@example.com>',
        subject: 'RE: Re: Invoice #4471 charged twice',
        body: 'Hi, invoice #4471 charged me twice.',
        messageId: '<parent-1@example.com>',
        references: '<root-0@example.com>',
        inReplyTo: '<root-0@example.com>',
      }),
    );
    const [mail] = await h.smtp.waitForMessages(sentBefore + 1);
    const sent = h.smtp.messages[sentBefore] ?? mail!;

    expect(h.llm.requests).toHaveLength(1);
    expect(h.llm.requests[0]!.schemaName).toBe('message_turn');
    expect(userPrompt(h.llm.requests[0]!)).toContain('invoice #4471 charged me twice');

    expect(sent.envelope.to).toEqual(['alice@example.com']);
    expect(sent.subject).toBe('Re: Invoice #4471 charged twice');
    expect(sent.headers.get('in-reply-to')).toBe('<parent-1@example.com>');
    expect(sent.headers.get('references')).toBe('<root-0@example.com> <parent-1@example.com>');
    expect(sent.headers.get('auto-submitted')).toBe('auto-replied');
    expect(sent.messageId).toMatch(/^<sa\.t_[^@]+@acme\.example>$/);
    expect(sent.text).toContain('we are looking into the duplicate charge.');

    const drafts = await waitFor(
      () => draftsOf(ingested.threadId!),
      (d) => d[0]?.status === 'sent',
      20_000,
      'draft marked sent',
    );
    expect(drafts).toHaveLength(1);
    expect(drafts[0]!.messageId).toBe(sent.messageId);
    const thread = await h.runtime.db.thread.findUniqueOrThrow({ where: { id: ingested.threadId! } });
    expect(thread.summary).toBe('Customer asked about an invoice.');
    expect(thread.currentIntent).toBe('billing_question');
    const usage = await h.runtime.db.llmCall.findMany({ where: { threadId: ingested.threadId! } });
    expect(usage).toHaveLength(1);
    expect(usage[0]!.promptTokens).toBeGreaterThan(0);
  });

  it("threads the customer's reply to the agent's message by its Message-ID", async () => {
    const first = await h.ingest(customerEmail({ subject: 'Password reset', body: 'I cannot log in.' }));
    const [draft] = await waitFor(
      () => draftsOf(first.threadId!),
      (d) => d.length === 1 && d[0]!.status === 'sent',
      20_000,
      'first reply',
    );
    const second = await h.ingest(
      customerEmail({
        subject: 'A completely different subject line',
        body: 'Still locked out.',
        inReplyTo: draft!.messageId,
        references: draft!.messageId,
      }),
    );
    expect(second.threadId).toBe(first.threadId);
    await waitFor(
      () => draftsOf(first.threadId!),
      (d) => d.length === 2,
      20_000,
      'second reply',
    );
  });

  it('repairs an invalid answer once, then hands the turn to a human after a second invalid answer', async () => {
    h.llm.enqueue(
      { kind: 'text', content: '{"reply": "not an object"' },
      { kind: 'json', content: turnAnswer({ body: 'Repaired answer.' }) },
    );
    const repaired = await h.ingest(customerEmail({ subject: 'Shipping delay', body: 'Where is my parcel?' }));
    const [ok] = await waitFor(
      () => draftsOf(repaired.threadId!),
      (d) => d.length === 1,
      20_000,
      'repaired draft',
    );
    expect(ok!.body).toBe('Repaired answer.');
    expect(h.llm.requests).toHaveLength(2);
    expect(JSON.stringify(h.llm.requests[1]!.body.messages)).toContain('not valid for the message_turn schema');

    h.llm.reset();
    h.llm.enqueue({ kind: 'text', content: 'no json at all' }, { kind: 'json', content: { reply: { body: 'x' } } });
    const sentBefore = h.smtp.messages.length;
    const failed = await h.ingest(customerEmail({ subject: 'Account question', body: 'Can you change my email?' }));
    const [human] = await waitFor(
      () => draftsOf(failed.threadId!),
      (d) => d.length === 1,
      20_000,
      'needs-human draft',
    );
    expect(human).toMatchObject({ needsHuman: true, status: 'draft' });
    expect(human!.body).toMatch(/could not draft this reply/);
    expect(h.smtp.messages.slice(sentBefore).some((m) => m.headers.get('in-reply-to') === failed.messageId)).toBe(false);
  });

  it('retries a 429 after its Retry-After, then answers', async () => {
    h.llm.enqueue(
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      { kind: 'json', content: turnAnswer({ body: 'After the 429.' }) },
    );
    const limited = await h.ingest(customerEmail({ subject: 'Rate limited', body: 'Hello?' }));
    const [afterLimit] = await waitFor(
      () => draftsOf(limited.threadId!),
      (d) => d.length === 1,
      20_000,
      'draft after 429',
    );
    expect(afterLimit!.body).toBe('After the 429.');
    expect(h.llm.requests.map((r) => r.schemaName)).toEqual(['message_turn', 'message_turn']);
  });

  it('answers a burst in one thread with one turn that covers every waiting message', async () => {
    const first = await h.ingest(
      customerEmail({ subject: 'Burst', body: 'First: my order is late.', messageId: '<burst-1@example.com>' }),
      { enqueue: false },
    );
    await h.ingest(
      customerEmail({
        subject: 'Re: Burst',
        body: 'Second: it is order 1234.',
        messageId: '<burst-2@example.com>',
        inReplyTo: '<burst-1@example.com>',
      }),
      { enqueue: false },
    );
    await h.ingest(
      customerEmail({
        subject: 'Re: Burst',
        body: 'Third: please hurry.',
        messageId: '<burst-3@example.com>',
        inReplyTo: '<burst-2@example.com>',
      }),
      { enqueue: false },
    );
    await h.runtime.queues().enqueueTurn(first.threadId!);
    await h.runtime.queues().enqueueTurn(first.threadId!);
    const [draft] = await waitFor(
      () => draftsOf(first.threadId!),
      (d) => d.length === 1,
      20_000,
      'burst draft',
    );
    expect(h.llm.requests).toHaveLength(1);
    const prompt = userPrompt(h.llm.requests[0]!);
    for (const text of ['First: my order is late.', 'Second: it is order 1234.', 'Third: please hurry.']) expect(prompt).toContain(text);
    expect(draft!.inReplyTo).toBe('<burst-3@example.com>');
  });

  it('gives a message that arrives while a turn is running its own turn afterwards', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    h.llm.setFallback(async (_request, index) => {
      if (index === 0) await held;
      return { kind: 'json', content: turnAnswer({ body: `answer ${index}` }) };
    });
    const first = await h.ingest(customerEmail({ subject: 'Running', body: 'First message.', messageId: '<run-1@example.com>' }));
    await h.llm.waitForRequests(1);
    await h.ingest(
      customerEmail({
        subject: 'Re: Running',
        body: 'Arrived mid-turn.',
        messageId: '<run-2@example.com>',
        inReplyTo: '<run-1@example.com>',
      }),
    );
    release();
    const drafts = await waitFor(
      () => draftsOf(first.threadId!),
      (d) => d.length === 2,
      20_000,
      'two drafts',
    );
    expect(drafts.map((d) => d.inReplyTo)).toEqual(['<run-1@example.com>', '<run-2@example.com>']);
    const second = userPrompt(h.llm.requests[1]!);
    expect(second).toContain('Arrived mid-turn.');
    // The first message was answered by the first turn: the second shows it only as a recent
    // exchange, with our answer to it, never as mail to answer.
    const [before, toAnswer] = second.split('NEW EMAIL TO ANSWER');
    expect(toAnswer).not.toContain('First message.');
    expect(before).toMatch(/RECENT EXCHANGES[\s\S]*First message\.[\s\S]*answer 0/);
  });

  it('runs turns of different threads in parallel', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    h.llm.setFallback(async () => {
      await gate;
      return { kind: 'json', content: turnAnswer() };
    });
    const a = await h.ingest(customerEmail({ from: 'pat@one.example', subject: 'Thread A', body: 'A' }));
    const b = await h.ingest(customerEmail({ from: 'sam@two.example', subject: 'Thread B', body: 'B' }));
    // Both requests reach the model before either is answered: the turns overlap.
    await h.llm.waitForRequests(2, 15_000);
    release();
    await waitFor(
      async () => (await draftsOf(a.threadId!)).length + (await draftsOf(b.threadId!)).length,
      (n) => n === 2,
      20_000,
      'both drafts',
    );
  });

  it('rebuilds lost jobs from PostgreSQL: a pending message without a job is answered after reconcile', async () => {
    const orphan = await h.ingest(customerEmail({ subject: 'Orphan', body: 'Nobody enqueued me.' }), { enqueue: false });
    const report = await h.runtime.pipeline().reconcile();
    expect(report.turns).toBeGreaterThanOrEqual(1);
    const [draft] = await waitFor(
      () => draftsOf(orphan.threadId!),
      (d) => d.length === 1,
      20_000,
      'reconciled draft',
    );
    expect(draft!.inReplyTo).toBe(orphan.messageId);
  });

  it('fails a poison job payload once, without retries', async () => {
    const job = await h.runtime.queues().turns.add('turn', { threadId: 42 }, { attempts: 5 });
    const failed = await waitFor(
      async () => (await Job.fromId(h.runtime.queues().turns, job.id!))!,
      (j) => j.failedReason !== undefined && j.failedReason !== '',
      20_000,
      'poison job failure',
    );
    expect(failed.attemptsMade).toBe(1);
    expect(failed.failedReason).toMatch(/invalid turns job payload: threadId/);
    expect(QUEUES.turns).toBe('turns');
  });
});
