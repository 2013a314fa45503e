/**
 * A replay always ends with its report, whatever the model does: unreachable (findings of issue
 * 11: it used to abort with no report), failing only for promotion (which then becomes terminal
 * instead of retrying without end), through the real `openai` client.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerEmail, turnAnswer } from '../support/agent-harness.ts';
import { replayFiles } from '../support/replay.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

let dir: string;
let llm: ScriptedLlmServer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'replay-failures-'));
  const day = (n: number) => new Date(Date.UTC(2026, 10, 2 + n, 9));
  const mails = [
    customerEmail({
      from: 'ann@customer.example',
      subject: 'Export',
      body: 'My export fails.',
      date: day(0),
      messageId: '<rf-1@customer.example>',
    }),
    customerEmail({
      from: 'ben@customer.example',
      subject: 'Invoice',
      body: 'Where is my invoice?',
      date: day(1),
      messageId: '<rf-2@customer.example>',
    }),
    customerEmail({
      from: 'cat@customer.example',
      subject: 'Login',
      body: 'I cannot log in.',
      date: day(2),
      messageId: '<rf-3@customer.example>',
    }),
    customerEmail({
      from: 'dan@customer.example',
      subject: 'Hello',
      body: 'Are you there?',
      date: day(8),
      messageId: '<rf-4@customer.example>',
    }),
    customerEmail({
      from: 'eve@customer.example',
      subject: 'Again',
      body: 'Still there?',
      date: day(9),
      messageId: '<rf-5@customer.example>',
    }),
  ];
  await Promise.all(mails.map((raw, i) => writeFile(path.join(dir, `${i + 1}.eml`), raw)));
  llm = await startScriptedLlmServer();
});
afterAll(async () => {
  await llm?.close();
  await rm(dir, { recursive: true, force: true });
});

const openai = (url: string) => ({
  LLM_PROVIDER: 'openai',
  OPENAI_API_KEY: 'sk-test-replay-0001',
  OPENAI_BASE_URL: url,
  OPENAI_MAX_RETRIES: '0',
  OPENAI_TIMEOUT: '2s',
});

describe('a replay always writes its report', () => {
  it('when the model endpoint is unreachable: every turn is handed to a person and recorded, and the breaker stops trying', async () => {
    const report = await replayFiles([dir], { env: openai('http://127.0.0.1:9/v1') });
    expect(report.messages).toHaveLength(5);
    expect(report.drafts).toHaveLength(5);
    expect(report.drafts.every((d) => d.needsHuman && d.flags.some((f) => f.rule === 'turn-failed'))).toBe(true);
    const turnFailures = report.failures.filter((f) => f.stage === 'turn');
    expect(turnFailures).toHaveLength(5);
    expect(turnFailures.every((f) => /LLM_UNAVAILABLE/.test(f.error))).toBe(true);
    expect(turnFailures.slice(3).every((f) => /not tried again/.test(f.error))).toBe(true);
    expect(turnFailures.map((f) => f.file)).toEqual(['1.eml', '2.eml', '3.eml', '4.eml', '5.eml']);
  }, 120_000);

  it('when only promotion fails: the failure is terminal for the thread and the replay goes on', async () => {
    llm.reset();
    llm.setFallback((request) =>
      request.schemaName === 'thread_promotion' ? { kind: 'status', status: 503 } : { kind: 'json', content: turnAnswer() },
    );
    const report = await replayFiles([dir], { env: { ...openai(llm.url), QUIET_AFTER: '72h' } });
    expect(report.drafts).toHaveLength(5);
    expect(report.drafts.every((d) => !d.needsHuman)).toBe(true);
    const promotionFailures = report.failures.filter((f) => f.stage === 'promotion');
    // Every thread failed once and was never retried; after three failures in a row the breaker
    // stops calling the model for promotions (turns go on).
    expect(promotionFailures.map((f) => f.threadId).sort()).toEqual(report.threads.map((t) => t.threadId).sort());
    expect(llm.requests.filter((r) => r.schemaName === 'thread_promotion')).toHaveLength(3);
    expect(llm.requests.filter((r) => r.schemaName === 'message_turn')).toHaveLength(5);
    expect(report.profiles.every((p) => p.pastThreads.length === 0)).toBe(true);
  }, 120_000);
});
