import nodemailer from 'nodemailer';
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  BadRequestError,
  InternalServerError,
  OpenAIError,
  RateLimitError,
} from 'openai';
// Not re-exported from the package root in openai 6.
import { LengthFinishReasonError } from 'openai/core/error';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';

const MessageTurn = z.object({
  reply: z.string(),
  needsHuman: z.boolean(),
  tags: z.array(z.string()),
});

const messages = [
  { role: 'system' as const, content: 'You answer support email.' },
  { role: 'user' as const, content: 'Where is my order #1234?' },
];

function client(server: ScriptedLlmServer, options: { maxRetries?: number; timeout?: number } = {}): OpenAI {
  return new OpenAI({ apiKey: 'test', baseURL: server.url, maxRetries: options.maxRetries ?? 0, timeout: options.timeout ?? 10_000 });
}

function parseTurn(openai: OpenAI) {
  return openai.chat.completions.parse({
    model: 'gpt-test',
    messages,
    response_format: zodResponseFormat(MessageTurn, 'message_turn'),
  });
}

describe('scripted LLM server with the real openai client', () => {
  let server: ScriptedLlmServer;
  beforeAll(async () => {
    server = await startScriptedLlmServer();
  });
  afterEach(() => server.reset());
  afterAll(async () => {
    await server.close();
  });

  it('answers chat.completions.parse with a parsed object and records the request', async () => {
    const turn = { reply: 'Your order ships tomorrow.', needsHuman: false, tags: ['shipping'] };
    server.enqueue({ kind: 'json', content: turn, usage: { prompt_tokens: 42, completion_tokens: 7 } });

    const completion = await parseTurn(client(server));

    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('gpt-test');
    expect(completion.choices[0]?.message.parsed).toEqual(turn);
    expect(completion.usage).toEqual({ prompt_tokens: 42, completion_tokens: 7, total_tokens: 49 });
    expect(server.requests).toHaveLength(1);
    const recorded = server.requests[0];
    expect(recorded?.path).toBe('/v1/chat/completions');
    expect(recorded?.schemaName).toBe('message_turn');
    expect(recorded?.body.messages).toEqual(messages);
    expect(recorded?.body.response_format?.type).toBe('json_schema');
    expect(recorded?.headers['authorization']).toBe('Bearer test');
  });

  it('computes plausible usage when none is scripted, and answers from the fallback when the queue is empty', async () => {
    server.setFallback((request, index) => ({
      kind: 'json',
      content: { reply: `#${index} for ${request.body.model}`, needsHuman: true, tags: [] },
    }));
    try {
      const openai = client(server);
      const first = await parseTurn(openai);
      const second = await parseTurn(openai);
      expect(first.choices[0]?.message.parsed?.reply).toBe('#0 for gpt-test');
      expect(second.choices[0]?.message.parsed?.reply).toBe('#1 for gpt-test');
      const usage = first.usage;
      expect(usage?.prompt_tokens).toBeGreaterThan(0);
      expect(usage?.completion_tokens).toBeGreaterThan(0);
      expect(usage?.total_tokens).toBe((usage?.prompt_tokens ?? 0) + (usage?.completion_tokens ?? 0));
    } finally {
      server.setFallback(() => ({ kind: 'status', status: 500 }));
    }
  });

  it('default fallback is a 500 saying there is no scripted response', async () => {
    const fresh = await startScriptedLlmServer();
    try {
      const error = await parseTurn(client(fresh)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InternalServerError);
      expect((error as InternalServerError).message).toMatch(/no scripted response/);
    } finally {
      await fresh.close();
    }
  });

  it('retries a 429 with retry-after: 0 immediately and succeeds on the second request', async () => {
    server.enqueue(
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      { kind: 'json', content: { reply: 'ok', needsHuman: false, tags: [] } },
    );

    const completion = await parseTurn(client(server, { maxRetries: 1 }));

    expect(completion.choices[0]?.message.parsed?.reply).toBe('ok');
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers['x-stainless-retry-count']).toBe('0');
    expect(server.requests[1]?.headers['x-stainless-retry-count']).toBe('1');
    // Without retry-after the SDK's first backoff is 375-500 ms; retry-after: 0 means no wait.
    const gap = (server.requests[1]?.receivedAt ?? 0) - (server.requests[0]?.receivedAt ?? 0);
    expect(gap).toBeLessThan(350);
  });

  it('surfaces a 429 as RateLimitError when retries are exhausted', async () => {
    server.enqueue({ kind: 'status', status: 429, headers: { 'retry-after': '0' } });
    const error = await parseTurn(client(server, { maxRetries: 0 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).status).toBe(429);
    expect((error as RateLimitError).code).toBe('rate_limit_exceeded');
    expect(server.requests).toHaveLength(1);
  });

  it('a hanging response makes the client time out with APIConnectionTimeoutError', async () => {
    server.enqueue({ kind: 'hang' });
    const started = performance.now();
    const error = await parseTurn(client(server, { timeout: 300 })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    expect(server.requests).toHaveLength(1);
  });

  it('close() returns promptly while a request hangs, and the client sees a connection error', async () => {
    const own = await startScriptedLlmServer({ fallback: () => ({ kind: 'hang' }) });
    const pending = parseTurn(client(own, { timeout: 60_000 })).catch((e: unknown) => e);
    await own.waitForRequests(1);

    const started = performance.now();
    await own.close();
    expect(performance.now() - started).toBeLessThan(1_000);

    const error = await pending;
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error).not.toBeInstanceOf(APIConnectionTimeoutError);
  });

  it('a delayed response arrives after the delay', async () => {
    server.enqueue({ kind: 'delay', ms: 150, then: { kind: 'json', content: { reply: 'late', needsHuman: false, tags: [] } } });
    const started = performance.now();
    const completion = await parseTurn(client(server));
    expect(completion.choices[0]?.message.parsed?.reply).toBe('late');
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('malformed JSON content makes parse throw the raw SyntaxError from JSON.parse (not an OpenAI error)', async () => {
    server.enqueue({ kind: 'text', content: '{"reply": "truncated' });
    const error = await parseTurn(client(server)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SyntaxError);
    expect(error).not.toBeInstanceOf(OpenAIError);
    expect(server.requests).toHaveLength(1);
  });

  it('valid JSON that does not match the schema makes parse throw a ZodError', async () => {
    server.enqueue({ kind: 'json', content: { reply: 42 } });
    const error = await parseTurn(client(server)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(z.ZodError);
  });

  it("finish_reason 'length' makes parse throw LengthFinishReasonError", async () => {
    server.enqueue({ kind: 'text', content: '{"reply": "cut', finishReason: 'length' });
    const error = await parseTurn(client(server)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LengthFinishReasonError);
  });

  it('rejects stream: true with 400 without consuming the queue', async () => {
    server.enqueue({ kind: 'json', content: { reply: 'kept', needsHuman: false, tags: [] } });
    const openai = client(server);
    const error = await openai.chat.completions.create({ model: 'gpt-test', messages, stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    const completion = await parseTurn(openai);
    expect(completion.choices[0]?.message.parsed?.reply).toBe('kept');
  });

  it('waitForRequests resolves on arrival and rejects on timeout', async () => {
    const waiting = server.waitForRequests(2, 5_000);
    server.setFallback(() => ({ kind: 'json', content: { reply: 'x', needsHuman: false, tags: [] } }));
    try {
      const openai = client(server);
      await Promise.all([parseTurn(openai), parseTurn(openai)]);
      await expect(waiting).resolves.toHaveLength(2);
      await expect(server.waitForRequests(3, 50)).rejects.toThrow(/expected 3 request\(s\) within 50 ms, received 2/);
    } finally {
      server.setFallback(() => ({ kind: 'status', status: 500 }));
    }
  });

  it('lists models', async () => {
    const models = await client(server).models.list();
    expect(models.data.map((m) => m.id)).toContain('scripted-model');
  });
});

describe('SMTP sink with nodemailer', () => {
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await sink.close();
  });

  function transport(target: SmtpSink, auth?: { user: string; pass: string }) {
    return nodemailer.createTransport({ host: target.host, port: target.port, secure: false, ignoreTLS: true, ...(auth ? { auth } : {}) });
  }

  it('receives a reply with threading and auto-reply headers', async () => {
    const before = sink.messages.length;
    const references = Array.from({ length: 8 }, (_, i) => `<thread-${i}.a-rather-long-local-part@customer.example>`);
    sink.setQueuedAs('provider-id-123');
    try {
      const info = await transport(sink).sendMail({
        from: 'Support <support@shop.example>',
        to: 'customer@customer.example',
        subject: 'Re: Où est ma commande ?',
        text: 'Your order ships tomorrow.\n',
        inReplyTo: '<thread-7.a-rather-long-local-part@customer.example>',
        references,
        headers: { 'Auto-Submitted': 'auto-replied' },
      });
      expect(info.response).toBe('250 Ok: queued as provider-id-123');

      const [mail] = (await sink.waitForMessages(before + 1)).slice(before);
      expect(mail).toBeDefined();
      if (!mail) return;
      expect(mail.envelope).toEqual({ from: 'support@shop.example', to: ['customer@customer.example'] });
      expect(mail.subject).toBe('Re: Où est ma commande ?');
      expect(mail.messageId).toBe(info.messageId);
      expect(mail.text.trim()).toBe('Your order ships tomorrow.');
      expect(mail.headers.get('in-reply-to')).toBe('<thread-7.a-rather-long-local-part@customer.example>');
      // The References header is long enough to be folded on the wire; the sink unfolds it.
      expect(mail.raw.toString('utf8')).toMatch(/References: [^\r\n]*\r\n[ \t]/);
      expect(mail.headers.get('references')).toBe(references.join(' '));
      expect(mail.headers.get('auto-submitted')).toBe('auto-replied');
      expect(mail.queuedAs).toBe('provider-id-123');
    } finally {
      sink.setQueuedAs(null);
    }
  });

  it('failNext(1, 451) fails exactly one transaction with a 4xx responseCode', async () => {
    const before = sink.messages.length;
    sink.failNext(1, 451);
    const mailer = transport(sink);
    const mail = { from: 'support@shop.example', to: 'customer@customer.example', subject: 'retry me', text: 'hello' };

    const error = await mailer.sendMail(mail).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as { responseCode?: number }).responseCode).toBe(451);
    expect(sink.messages).toHaveLength(before);
    expect(sink.rejectedCount).toBe(1);

    const info = await mailer.sendMail(mail);
    expect(info.response).toMatch(/^250 Ok: queued as [0-9A-F]{12}$/);
    expect(sink.messages).toHaveLength(before + 1);
  });

  it('failNext with 550 gives a permanent failure code', async () => {
    sink.failNext(1, 550, 'Mailbox unavailable');
    const error = await transport(sink)
      .sendMail({ from: 'support@shop.example', to: 'gone@customer.example', subject: 'x', text: 'x' })
      .catch((e: unknown) => e);
    expect((error as { responseCode?: number }).responseCode).toBe(550);
    expect(String((error as { response?: string }).response)).toMatch(/Mailbox unavailable/);
  });

  it('waitForMessages rejects on timeout with what it received', async () => {
    const count = sink.messages.length;
    await expect(sink.waitForMessages(count + 1, 50)).rejects.toThrow(`received ${count}`);
  });

  it('requireAuth rejects a wrong password and a missing login, and accepts the right credentials', async () => {
    const secured = await startSmtpSink({ requireAuth: true, user: 'agent', password: 's3cret' });
    try {
      const mail = { from: 'support@shop.example', to: 'customer@customer.example', subject: 'auth', text: 'auth' };

      const wrong = await transport(secured, { user: 'agent', pass: 'wrong' })
        .sendMail(mail)
        .catch((e: unknown) => e);
      expect(wrong).toBeInstanceOf(Error);
      expect((wrong as { code?: string }).code).toBe('EAUTH');
      expect((wrong as { responseCode?: number }).responseCode).toBe(535);

      const anonymous = await transport(secured)
        .sendMail(mail)
        .catch((e: unknown) => e);
      expect((anonymous as { responseCode?: number }).responseCode).toBe(530);
      expect(secured.messages).toHaveLength(0);

      await transport(secured, { user: secured.user, pass: secured.password }).sendMail(mail);
      expect(secured.messages).toHaveLength(1);
      expect(secured.messages[0]?.authenticatedUser).toBe('agent');
    } finally {
      await secured.close();
    }
  });
});
