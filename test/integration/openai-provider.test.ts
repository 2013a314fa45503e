import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAppError } from '../../src/errors.ts';
import { OpenAiProvider, retryDelayMs } from '../../src/llm/openai-provider.ts';
import type { TurnRequest } from '../../src/llm/provider.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';
import { turnAnswer } from '../support/agent-harness.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

let llm: ScriptedLlmServer;
beforeAll(async () => {
  llm = await startScriptedLlmServer();
});
afterAll(async () => {
  await llm?.close();
});
beforeEach(() => llm.reset());

const request: TurnRequest = {
  prompt: { system: 'system prompt', user: 'user prompt' },
  thread: { subject: 's', summary: '', openItems: [], currentIntent: '', tags: [], pinnedItems: [], status: 'open' },
  profile: null,
  emails: [],
  supportName: 'Acme Support',
  summaryTokenCap: 200,
};

function provider(settings: { timeoutMs?: number; maxRetries?: number; apiKey?: string } = {}, logger = silentLogger) {
  return new OpenAiProvider(
    {
      apiKey: settings.apiKey ?? 'sk-test',
      baseUrl: llm.url,
      model: 'test-model',
      timeoutMs: settings.timeoutMs ?? 2000,
      maxRetries: settings.maxRetries ?? 1,
    },
    logger,
    async () => {},
  );
}

describe('the OpenAI-compatible provider (real openai client, scripted server)', () => {
  it('sends the message_turn JSON schema and returns the validated answer with usage', async () => {
    llm.enqueue({ kind: 'json', content: turnAnswer({ body: 'hi' }), usage: { prompt_tokens: 123, completion_tokens: 45 } });
    const outcome = await provider().messageTurn(request);
    expect(outcome).toMatchObject({ ok: true, value: { reply: { body: 'hi' } } });
    expect(outcome.calls).toEqual([{ purpose: 'message_turn', promptTokens: 123, completionTokens: 45, ok: true }]);
    expect(llm.requests[0]!.schemaName).toBe('message_turn');
    expect(llm.requests[0]!.body.response_format?.type).toBe('json_schema');
    expect(llm.requests[0]!.body.model).toBe('test-model');
  });

  it('retries a request that timed out', async () => {
    llm.enqueue({ kind: 'hang' }, { kind: 'json', content: turnAnswer({ body: 'second try' }) });
    const outcome = await provider({ timeoutMs: 300, maxRetries: 1 }).messageTurn(request);
    expect(outcome).toMatchObject({ ok: true, value: { reply: { body: 'second try' } } });
    expect(llm.requests).toHaveLength(2);
  });

  it('gives up with a retryable LLM_UNAVAILABLE error when the server keeps timing out', async () => {
    llm.enqueue({ kind: 'hang' }, { kind: 'hang' });
    const error = await provider({ timeoutMs: 200, maxRetries: 1 })
      .messageTurn(request)
      .catch((e: unknown) => e);
    expect(isAppError(error, 'LLM_UNAVAILABLE')).toBe(true);
    expect(isAppError(error) && error.retryable).toBe(true);
  });

  it('does not retry a request the server rejects (400), and keeps the key out of the error', async () => {
    llm.enqueue({
      kind: 'status',
      status: 401,
      body: { error: { message: 'Incorrect API key provided: sk-secret-abcdef123456', type: 'invalid_request_error' } },
    });
    const lines: string[] = [];
    const error = await provider(
      { apiKey: 'sk-secret-abcdef123456' },
      createLogger('t', { level: 'trace', secrets: ['sk-secret-abcdef123456'], write: (l) => lines.push(l) }),
    )
      .messageTurn(request)
      .catch((e: unknown) => e);
    expect(isAppError(error, 'LLM_REJECTED')).toBe(true);
    expect(llm.requests).toHaveLength(1);
    expect(String((error as Error).message)).not.toContain('sk-secret-abcdef123456');
    expect(lines.join('\n')).not.toContain('sk-secret-abcdef123456');
  });

  it('reports an answer that is invalid twice as a failure the caller hands to a human', async () => {
    llm.enqueue({ kind: 'text', content: '{' }, { kind: 'json', content: { summary: 1 } });
    const outcome = await provider().messageTurn(request);
    expect(outcome.ok).toBe(false);
    expect(outcome.calls.map((c) => c.ok)).toEqual([false, false]);
  });
});

describe('retry delays', () => {
  it('honour Retry-After, capped at a minute, and never retry a client error', async () => {
    const { APIError } = await import('openai');
    const withHeaders = (status: number, headers: Record<string, string>) =>
      APIError.generate(status, { error: { message: 'x' } }, 'x', new Headers(headers));
    expect(retryDelayMs(withHeaders(429, { 'retry-after': '3' }), 0)).toBe(3000);
    expect(retryDelayMs(withHeaders(429, { 'retry-after-ms': '250' }), 0)).toBe(250);
    expect(retryDelayMs(withHeaders(503, { 'retry-after': '3600' }), 0)).toBe(60_000);
    expect(retryDelayMs(withHeaders(400, {}), 0)).toBeNull();
    expect(retryDelayMs(withHeaders(500, {}), 2)).toBeGreaterThanOrEqual(2000);
  });
});
