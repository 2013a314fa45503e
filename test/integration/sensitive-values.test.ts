/**
 * Sensitive values never reach the model, the logs or memory: a customer mail with a card number
 * (in the subject and the body), its CVV, an IBAN, a password, a US SSN and a card in an attached
 * CSV goes through the real pipeline (PostgreSQL, the real `openai` client against the scripted
 * server, a runtime whose logger writes every line, trace included, to this test). Every prompt the
 * server received, the stored turn prompt, the thread's subject and summary, the promotion's
 * decisions and facts and every log line hold placeholders only; the raw mail keeps the values
 * (erasable); the reply tells the customer not to send card details by email.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleThreadTurn, handTurnToHuman } from '../../src/app/handle-thread-turn.ts';
import { promoteThread } from '../../src/app/promote-thread.ts';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { ingestRawMessage, type IngestResult } from '../../src/ingest/ingest-message.ts';
import { startConsole } from '../../src/console/server.ts';
import { createLogger } from '../../src/logger.ts';
import { startAgentHarness, turnAnswer, type AgentHarness } from '../support/agent-harness.ts';
import { mailWithAttachments } from '../support/attachment-files.ts';
import type { RecordedRequest } from '../support/scripted-llm-server.ts';

// Every spelling of every value the customer sent, as it must never appear outside the raw mail.
const RAW_VALUES = [
  '4242 4242 4242 4242',
  '4242424242424242',
  '5555 5555 5555 4444',
  'DE89 3704 0044 0532 0130 00',
  'DE89370400440532013000',
  'CVV: 123',
  'Sommer2024!',
  '078-05-1120',
  '4111 1111 1111 1111',
];

const BODY = [
  'Hallo,',
  '',
  'my card 4242 4242 4242 4242 (CVV: 123) was charged twice for order 4242424242424241.',
  'Please refund to my IBAN DE89 3704 0044 0532 0130 00.',
  'My login is anna@example.com, password: Sommer2024!',
  'For the tax form, my SSN is 078-05-1120. Please only call me in the evenings.',
  '',
  'Anna',
].join('\n');

const PASSWORD = 'correct horse battery staple';

let h: AgentHarness;
let runtime: Runtime;
const lines: string[] = [];
let ingested: IngestResult;

/** The email block the model was shown, as a scripted model that copies it into its notes would. */
function emailTextOf(request: RecordedRequest): string {
  const user = request.body.messages.map((m) => String(m.content)).join('\n');
  return /<<<email [^\n]*>>>\n([\s\S]*?)\n<<<end email/.exec(user)?.[1] ?? '';
}

beforeAll(async () => {
  h = await startAgentHarness({ REPLY_MODE: 'draft', CONSOLE_PASSWORD: PASSWORD }, { workers: false });
  // A runtime of its own on the same database and model, whose logger keeps every line.
  const logger = createLogger('mask', { level: 'trace', write: (line) => lines.push(line) });
  runtime = await openRuntime(loadConfig(h.env), logger);
  h.llm.setFallback((request) => {
    const text = emailTextOf(request);
    if (request.schemaName === 'thread_promotion') {
      const source = /message-id="([^"]+)"|Message-ID: (<[^>\s]+>)|(<[^>\s]*@example\.com>)/.exec(
        request.body.messages.map((m) => String(m.content)).join('\n'),
      );
      const sourceMessageId = source?.[1] ?? source?.[2] ?? source?.[3] ?? '';
      const fact = (key: string, value: string, evidence: string) => ({
        key,
        value,
        category: 'preference',
        confidence: 0.95,
        explicit: true,
        evidence,
        sourceMessageId,
      });
      return {
        kind: 'json',
        content: {
          topic: 'double charge',
          facts: [
            fact('payment_card', '[card •••• 4242]', 'my card [card •••• 4242]'),
            fact('refund_iban', '[iban •••• 3000]', 'Please refund to my IBAN [iban •••• 3000]'),
            fact('login_password', '[password]', 'password: [password]'),
            fact('preferred_contact_time', 'evenings', 'Please only call me in the evenings'),
          ],
          commitments: [],
        },
      };
    }
    return {
      kind: 'json',
      content: turnAnswer({
        body: 'Hello Anna,\n\nThank you, we are looking into the double charge.\n\nBest regards,\nAcme Support',
        summary: `Customer wrote: ${text.slice(0, 400)}`,
        openItems: ['refund the double charge'],
      }),
    };
  });
  // The provider's first answer is an error that echoes a card number (a provider reflecting the
  // request): the retry's log line must not carry it.
  h.llm.enqueue({
    kind: 'status',
    status: 500,
    body: { error: { message: 'upstream refused card 4111 1111 1111 1111', type: 'server_error', param: null, code: null } },
  });
  ingested = await ingestRawMessage(
    runtime.ingestDeps({ pipeline: null }),
    Buffer.from(
      mailWithAttachments({
        from: 'Anna Berg <anna@example.com>',
        subject: 'Double charge on card 4242 4242 4242 4242',
        body: BODY,
        parts: [
          {
            filename: 'statement.csv',
            contentType: 'text/csv',
            content: Buffer.from('date,card,amount\n2026-12-01,5555 5555 5555 4444,49.00\n'),
          },
        ],
      }),
    ),
    { kind: 'api' },
  );
  await handleThreadTurn(runtime.turnDeps(), ingested.threadId!);
  await promoteThread(runtime.promotionDeps(), ingested.threadId!, 'operator');
}, 120_000);

afterAll(async () => {
  await runtime?.close();
  await h?.close();
});

function expectNoRawValue(where: string, text: string) {
  for (const raw of RAW_VALUES) expect(text, `${where} holds ${raw}`).not.toContain(raw);
}

describe('a mail with a card number, CVV, IBAN, password and SSN', () => {
  it('stores the message masked and keeps the raw mail as it arrived', async () => {
    expect(ingested).toMatchObject({ outcome: 'processed', replyNeeded: true });
    const message = await runtime.db.message.findUniqueOrThrow({ where: { id: ingested.id }, include: { raw: true } });
    for (const [column, value] of Object.entries({
      subject: message.subject,
      bodyText: message.bodyText,
      extractedText: message.extractedText,
      attachmentText: message.attachmentText,
    }))
      expectNoRawValue(`Message.${column}`, value);
    expect(message.subject).toBe('Double charge on card [card •••• 4242]');
    expect(message.extractedText).toContain('my card [card •••• 4242] (CVV: [cvv]) was charged twice for order 4242424242424241.');
    expect(message.extractedText).toContain('IBAN [iban •••• 3000]');
    expect(message.extractedText).toContain('password: [password]');
    expect(message.extractedText).toContain('my SSN is [national id]');
    expect(message.attachmentText).toContain('[card •••• 4444]');
    const raw = Buffer.from(message.raw!.raw).toString('utf8');
    for (const value of ['4242 4242 4242 4242', 'DE89 3704 0044 0532 0130 00', 'CVV: 123', 'Sommer2024!', '078-05-1120'])
      expect(raw).toContain(value);
  });

  it('gives the model placeholders only, with a note next to the email', () => {
    const requests = h.llm.requests.filter((r) => r.schemaName === 'message_turn' || r.schemaName === 'thread_promotion');
    expect(requests.map((r) => r.schemaName)).toEqual(['message_turn', 'message_turn', 'thread_promotion']);
    for (const request of requests) expectNoRawValue(`the ${request.schemaName} prompt`, JSON.stringify(request.body));
    const turnPrompt = requests[1]!.body.messages.map((m) => String(m.content)).join('\n');
    expect(turnPrompt).toContain('subject: Double charge on card [card •••• 4242]');
    expect(turnPrompt).toContain('[card •••• 4242] (CVV: [cvv])');
    expect(turnPrompt).toMatch(/<<<end email \w+>>>\nNOTE: the customer sent a payment card number, a card security code \(CVV\)/);
    expect(turnPrompt).toContain('not to send card numbers or security codes by email');
    expect(turnPrompt).toContain('[card •••• 4444]');
  });

  it('stores the turn prompt, the thread subject and summary masked', async () => {
    const turn = await runtime.db.turn.findFirstOrThrow({ where: { threadId: ingested.threadId! } });
    expectNoRawValue('Turn.prompt', turn.prompt ?? '');
    expect(turn.prompt).toContain('[iban •••• 3000]');
    const thread = await runtime.db.thread.findUniqueOrThrow({ where: { id: ingested.threadId! } });
    expectNoRawValue('Thread.subject', thread.subject);
    expectNoRawValue('Thread.summary', thread.summary);
    expect(thread.summary).toContain('[card •••• 4242]');
  });

  it('promotes no masked value: each is rejected by the sensitive-value rule; the harmless fact passes', async () => {
    const decisions = await runtime.db.promotionDecision.findMany({ where: { entityId: ingested.entityId! }, orderBy: { key: 'asc' } });
    expect(decisions.map((d) => [d.key, d.accepted, d.rule])).toEqual([
      ['login_password', false, 'sensitive-value'],
      ['payment_card', false, 'sensitive-value'],
      ['preferred_contact_time', true, 'accepted'],
      ['refund_iban', false, 'sensitive-value'],
    ]);
    const facts = await runtime.db.profileFact.findMany({ where: { entityId: ingested.entityId! } });
    expect(facts.map((f) => [f.key, f.value])).toEqual([['preferred_contact_time', 'evenings']]);
    for (const d of decisions) expectNoRawValue('PromotionDecision', `${d.value} ${d.evidence ?? ''}`);
  });

  it('tells the customer not to send card details by email, though the model did not', async () => {
    const draft = await runtime.db.draft.findFirstOrThrow({ where: { threadId: ingested.threadId! } });
    expect(draft.body).toBe(
      'Hello Anna,\n\nThank you, we are looking into the double charge.\n\n' +
        'For your security, please never send card numbers or security codes by email; we have hidden the card details you sent. ' +
        'For your security, please never share passwords or codes by email, and change the password you sent.\n\n' +
        'Best regards,\nAcme Support',
    );
  });

  it('carries no echoed value in a failed turn’s error, nor in the draft handed to a person', async () => {
    const other = await ingestRawMessage(
      runtime.ingestDeps({ pipeline: null }),
      Buffer.from(
        mailWithAttachments({ from: 'Ben Cole <ben@example.com>', subject: 'Help', body: 'Hello, my order is late.', parts: [] }),
      ),
      { kind: 'api' },
    );
    h.llm.enqueue({
      kind: 'status',
      status: 400,
      body: { error: { message: 'invalid request: card 4111 1111 1111 1111', type: 'invalid_request_error', param: null, code: null } },
    });
    const failure = await handleThreadTurn(runtime.turnDeps(), other.threadId!).then(
      () => null,
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    );
    expect(failure).toContain('invalid request: card [card •••• 1111]');
    await handTurnToHuman(runtime.turnDeps(), other.threadId!, failure!);
    const draft = await runtime.db.draft.findFirstOrThrow({ where: { threadId: other.threadId! } });
    expect(draft.body).toContain('[card •••• 1111]');
    expectNoRawValue('the handed-off draft', draft.body);
  });

  it('shows the console’s thread, draft and original-message pages masked; the .eml download keeps the bytes', async () => {
    const server = await startConsole(runtime, { port: 0 });
    try {
      const form = await fetch(`${server.url}/login`);
      const loginCookie = form.headers.getSetCookie()[0]!.split(';')[0]!;
      const token = /name="_login" value="([^"]+)"/.exec(await form.text())![1]!;
      const login = await fetch(`${server.url}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: loginCookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ password: PASSWORD, _login: token }),
      });
      const cookie = login.headers
        .getSetCookie()
        .find((c) => c.startsWith('sa_session='))!
        .split(';')[0]!;
      const get = async (path: string) => {
        const response = await fetch(`${server.url}${path}`, { headers: { cookie } });
        expect(response.status, path).toBe(200);
        return response.text();
      };
      for (const path of [`/threads/${ingested.threadId!}`, `/messages/${ingested.id}/original`, '/drafts']) {
        const page = await get(path);
        expectNoRawValue(path, page);
        expect(page, path).toContain('[card •••• 4242]');
      }
      const original = await get(`/messages/${ingested.id}/original`);
      expect(original).toContain('Subject: Double charge on card [card •••• 4242]');
      expect(original).toContain('password: [password]');
      expect(await get(`/messages/${ingested.id}/original.eml`)).toContain('password: Sommer2024!');
    } finally {
      await server.close();
    }
  });

  it('writes no sensitive value to the log, not even one a provider echoed in its error', () => {
    expect(lines.length).toBeGreaterThan(0);
    const retry = lines.find((l) => l.includes('LLM request failed; retrying'));
    expect(retry).toContain('upstream refused card [card •••• 1111]');
    for (const line of lines) expectNoRawValue('a log line', line);
  });
});
