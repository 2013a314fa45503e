/**
 * Memory over months: the long-history scenario in fixtures/emails/long-history/ (one thread of 84
 * mails over 58 days that never rests 72 h) replayed through the real `openai` client against the
 * scripted server, and through the offline provider. Promotion keeps up with the thread (periodic
 * passes, every customer message shown to exactly one pass), the ledger answers "what did we
 * believe then", a relative promise gets an absolute due date and closes on the customer's word,
 * and no fact is accepted already expired. The replay keeps its database (`--data-dir`), so the
 * CLI's `profile --as-of` and `commitments` are checked on what it decided.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/config.ts';
import { OpenAiProvider } from '../../src/llm/openai-provider.ts';
import { silentLogger } from '../../src/logger.ts';
import type { ReplayReport } from '../../src/replay/replay-report.ts';
import { runReplay } from '../../src/replay/run-replay.ts';
import { turnAnswer } from '../support/agent-harness.ts';
import { startScriptedLlmServer, type RecordedRequest, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../../fixtures/emails/long-history');
const BIN = path.resolve(import.meta.dirname, '../../bin/support-agent.js');
const HOUR = 3_600_000;
const at = z.object({ messageId: z.string(), date: z.coerce.date() });
const scenario = z
  .object({
    customer: z.string(),
    messages: z.number(),
    first: at,
    last: at,
    longestGapHours: z.number(),
    preferenceChange: at.extend({ key: z.string(), before: z.string(), after: z.string() }),
    identifier: at.extend({ key: z.string(), value: z.string() }),
    situation: at.extend({ key: z.string() }),
    laterSituation: at.extend({ key: z.string() }),
    doubleCharge: at,
    refundConfirmed: at,
  })
  .parse(JSON.parse(readFileSync(path.join(FIXTURE, 'scenario.json'), 'utf8')));
const PROMOTE_EVERY_MS = 24 * HOUR;
const PROMISE = 'We will refund the duplicate charge by Friday.';

interface Cli {
  code: number;
  stdout: string;
  stderr: string;
}
function cli(args: string[], dataDir: string): Promise<Cli> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env['PATH'] ?? '', HOME: os.tmpdir(), DATA_DIR: dataDir }, timeout: 150_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

const userPrompt = (request: RecordedRequest) => String(request.body.messages.find((m) => m.role === 'user')?.content ?? '');
/** The newest of the scenario's Message-IDs a prompt mentions: the message a turn answers. */
function newestMessage(prompt: string): number {
  return Math.max(0, ...[...prompt.matchAll(/<priya-(\d{3})@/g)].map((m) => Number(m[1])));
}
const idOf = (n: number) => `<priya-${String(n).padStart(3, '0')}@northwind.example>`;
const numberOf = (messageId: string) => Number(/priya-(\d{3})@/.exec(messageId)?.[1] ?? 0);
/** A fixture message's Date header, read from its file. */
function dateOf(messageId: string): number {
  const raw = readFileSync(path.join(FIXTURE, `${String(numberOf(messageId)).padStart(3, '0')}.eml`), 'utf8');
  return new Date(/^Date: (.+)$/m.exec(raw)![1]!.trim()).getTime();
}

/** What the scripted model reads out of one promotion pass: the facts stated in the messages it is shown, the promise, the refund. */
function promotionAnswer(request: RecordedRequest) {
  const prompt = userPrompt(request);
  const shown = new Set([...prompt.matchAll(/<<<message id="<priya-(\d{3})@/g)].map((m) => Number(m[1])));
  const fact = (n: number, key: string, value: string, category: string, evidence: string) =>
    shown.has(n) ? [{ key, value, category, confidence: 0.9, explicit: true, evidence, sourceMessageId: idOf(n) }] : [];
  const facts = [
    ...fact(1, 'workspace_id', 'WS-48213', 'account', 'Our workspace ID is WS-48213'),
    ...fact(1, 'current_issue', 'sync failures with error E-1042', 'situation', 'troubleshooting sync failures with error E-1042'),
    ...fact(1, 'preferred_contact_time', 'evenings', 'preference', 'Please call me in the evenings'),
    ...fact(1, 'phone', '+44 20 7946 0321', 'identity', 'my phone is +44 20 7946 0321'),
    ...fact(1, 'company', 'Northwind Traders', 'identity', 'I work for Northwind Traders'),
    ...fact(
      numberOf(scenario.preferenceChange.messageId),
      'preferred_contact_time',
      'mornings',
      'preference',
      'please call me in the mornings instead',
    ),
    ...fact(
      numberOf(scenario.laterSituation.messageId),
      'current_issue',
      'export timeouts on large reports',
      'situation',
      'export timeouts on large reports',
    ),
  ];
  const promise = /- id="([^"]+)" agent [^:]+:\d\d:[\d.]+Z: [^\n]*refund the duplicate charge by Friday/.exec(prompt);
  const commitments = promise ? [{ text: 'refund the duplicate charge', due: 'Friday', sourceMessageId: promise[1]! }] : [];
  const open = /- id=(\S+): refund the duplicate charge/.exec(prompt);
  const confirm = numberOf(scenario.refundConfirmed.messageId);
  const commitmentUpdates =
    open && shown.has(confirm)
      ? [
          {
            commitment: open[1]!,
            status: 'fulfilled',
            evidence: 'the refund for the duplicate charge arrived today',
            sourceMessageId: idOf(confirm),
          },
        ]
      : [];
  return { topic: 'sync failures', facts, commitments, commitmentUpdates };
}

function turnFor(request: RecordedRequest) {
  const n = newestMessage(userPrompt(request));
  if (n === numberOf(scenario.doubleCharge.messageId)) {
    return turnAnswer({
      body: `Hello Priya,\n\nSorry about that. ${PROMISE}\n\nAcme Support`,
      summary: 'Sync failures; a double charge to refund.',
    });
  }
  const body = 'Hello Priya,\n\nThanks for the update, we are on it.\n\nAcme Support';
  // The customer states something durable: the model asks for a checkpoint.
  if (n === numberOf(scenario.preferenceChange.messageId))
    return { ...turnAnswer({ body }), checkpoint: { reason: 'changed contact time' } };
  return turnAnswer({ body, summary: 'Windows sync failures with E-1042 in workspace WS-48213.' });
}

interface Inspected {
  report: ReplayReport;
  dataDir: string;
}

async function replayInto(provider: OpenAiProvider | undefined, env: Record<string, string>): Promise<Inspected> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'sa-long-'));
  const dataDir = path.join(base, 'data');
  const report = await runReplay({
    inputs: [FIXTURE],
    address: 'support@acme.example',
    config: loadConfig(env),
    logger: silentLogger,
    dataDir,
    ...(provider ? { provider } : {}),
  });
  return { report, dataDir };
}

const profileOf = (report: ReplayReport) => {
  const profile = report.profiles.find((p) => p.addresses.includes(scenario.customer));
  if (!profile) throw new Error('no profile for the customer');
  return profile;
};

/** The checks both providers must pass. */
function sharedChecks(get: () => Inspected) {
  it('shows every customer message to exactly one promotion pass, and promotes while the thread is alive', () => {
    const { report } = get();
    expect(report.threads).toHaveLength(1);
    const [thread] = report.threads;
    const covered = thread!.promotions.flatMap((p) => p.messageIds);
    expect(covered).toHaveLength(scenario.messages);
    expect(new Set(covered).size).toBe(scenario.messages);
    // The thread never rests QUIET_AFTER, yet passes ran all along: periodic, one a day or so.
    const periodic = thread!.promotions.filter((p) => p.trigger === 'periodic');
    expect(periodic.length).toBeGreaterThan(20);
    expect(thread!.promotions.every((p) => p.error === null)).toBe(true);
    // No message waits more than PROMOTE_EVERY for its pass.
    for (const pass of thread!.promotions.filter((p) => new Date(p.at) < scenario.last.date)) {
      for (const id of pass.messageIds) expect(new Date(pass.at).getTime() - dateOf(id)).toBeLessThanOrEqual(PROMOTE_EVERY_MS);
    }
  });

  it('has the changed preference in the profile within PROMOTE_EVERY, and the ledger answers for both dates', () => {
    const { report } = get();
    const facts = profileOf(report).facts.filter((f) => f.key === scenario.preferenceChange.key);
    const after = facts.find((f) => f.value === scenario.preferenceChange.after)!;
    const before = facts.find((f) => f.value === scenario.preferenceChange.before)!;
    expect(after.status).toBe('active');
    expect(new Date(after.validFrom!).getTime()).toBe(scenario.preferenceChange.date.getTime());
    const lag = new Date(after.recordedAt).getTime() - scenario.preferenceChange.date.getTime();
    expect(lag).toBeGreaterThanOrEqual(0);
    expect(lag).toBeLessThanOrEqual(PROMOTE_EVERY_MS);
    expect(before.status).toBe('superseded');
    expect(before.validUntil).toBe(scenario.preferenceChange.date.toISOString());
  });

  it('keeps the identifier from message 1 in the profile at the end', () => {
    const { report } = get();
    const id = profileOf(report).facts.find((f) => f.key === scenario.identifier.key && f.status === 'active');
    expect(id?.value).toBe(scenario.identifier.value);
  });

  it('accepts no fact already expired, and lets the 48 h situation reach the profile while it matters', () => {
    const { report } = get();
    const profile = profileOf(report);
    for (const fact of profile.facts) {
      if (fact.expiresAt) expect(new Date(fact.expiresAt).getTime()).toBeGreaterThan(new Date(fact.recordedAt).getTime());
    }
    const accepted = profile.decisions.filter((d) => d.verdict === 'accepted');
    expect(accepted.length).toBeGreaterThan(0);
    expect(profile.decisions.filter((d) => d.rule === 'expired-before-promotion')).toEqual([]);
    const situation = profile.facts.find((f) => f.key === scenario.situation.key && f.validFrom === scenario.situation.date.toISOString());
    expect(situation).toBeDefined();
    expect(new Date(situation!.recordedAt).getTime() - scenario.situation.date.getTime()).toBeLessThan(48 * HOUR);
    // By the end both situations have run out.
    expect(profile.facts.filter((f) => f.key === scenario.situation.key).every((f) => f.status !== 'active')).toBe(true);
  });

  it('`profile --as-of` and `why --as-of` answer from the replay’s database', async () => {
    const { dataDir } = get();
    const asOf = (date: Date) => new Date(date.getTime()).toISOString();
    const beforeChange = await cli(
      ['profile', scenario.customer, '--as-of', asOf(new Date(scenario.preferenceChange.date.getTime() - HOUR))],
      dataDir,
    );
    expect(beforeChange.stderr).toBe('');
    expect(JSON.parse(beforeChange.stdout)).toMatchObject({ [scenario.preferenceChange.key]: scenario.preferenceChange.before });
    const afterChange = await cli(
      ['profile', scenario.customer, '--as-of', asOf(new Date(scenario.preferenceChange.date.getTime() + PROMOTE_EVERY_MS))],
      dataDir,
    );
    expect(JSON.parse(afterChange.stdout)).toMatchObject({ [scenario.preferenceChange.key]: scenario.preferenceChange.after });
    const why = await cli(
      ['why', scenario.customer, scenario.preferenceChange.key, '--as-of', asOf(new Date(scenario.preferenceChange.date.getTime() - HOUR))],
      dataDir,
    );
    expect(why.code).toBe(0);
    expect(why.stdout).toContain(`${scenario.preferenceChange.key} = "${scenario.preferenceChange.before}"`);
    expect(why.stdout).not.toContain(`"${scenario.preferenceChange.after}"`);
  }, 300_000);
}

describe('long history through the real openai client and the scripted model', () => {
  let llm: ScriptedLlmServer;
  let inspected: Inspected;

  beforeAll(async () => {
    llm = await startScriptedLlmServer({
      fallback: (request) =>
        request.schemaName === 'thread_promotion'
          ? { kind: 'json', content: promotionAnswer(request) }
          : { kind: 'json', content: turnFor(request) },
    });
    const provider = new OpenAiProvider(
      { apiKey: 'sk-test', baseUrl: llm.url, model: 'scripted', timeoutMs: 5000, maxRetries: 0 },
      silentLogger,
    );
    inspected = await replayInto(provider, { LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: llm.url });
  }, 300_000);

  afterAll(async () => {
    await llm?.close();
    if (inspected) await rm(path.dirname(inspected.dataDir), { recursive: true, force: true });
  });

  sharedChecks(() => inspected);

  it('makes one promotion call per pass, far fewer than one per customer message', () => {
    const calls = llm.requests.filter((r) => r.schemaName === 'thread_promotion').length;
    const passes = inspected.report.threads.flatMap((t) => t.promotions).length;
    expect(calls).toBe(passes);
    expect(calls / scenario.messages).toBeLessThan(0.75);
    // Facts learnt by email carry the tags of the thread they were learnt in.
    const learnt = profileOf(inspected.report).facts.filter((f) => f.origin === 'email');
    expect(learnt.length).toBeGreaterThan(0);
    expect(learnt.every((f) => f.tags.includes('billing'))).toBe(true);
  });

  it('gives the promise an absolute due date, closes it on the customer’s word, and never shows it open afterwards', async () => {
    const profile = profileOf(inspected.report);
    const [commitment] = profile.commitments;
    expect(profile.commitments).toHaveLength(1);
    // "by Friday" in a reply to a Monday or Tuesday mail: the Friday of that week, end of day UTC.
    const promised = scenario.doubleCharge.date;
    const friday = new Date(
      Date.UTC(
        promised.getUTCFullYear(),
        promised.getUTCMonth(),
        promised.getUTCDate() + ((5 - promised.getUTCDay() + 7) % 7),
        23,
        59,
        59,
        999,
      ),
    );
    expect(commitment).toMatchObject({
      text: 'refund the duplicate charge',
      due: 'Friday',
      dueAt: friday.toISOString(),
      status: 'fulfilled',
      closedByMessageId: scenario.refundConfirmed.messageId,
    });
    expect(commitment!.closeEvidence).toContain('refund for the duplicate charge arrived');
    expect(profile.outstandingCommitments).toEqual([]);
    const turns = llm.requests
      .filter((r) => r.schemaName === 'message_turn')
      .map((r) => ({ n: newestMessage(userPrompt(r)), prompt: userPrompt(r) }));
    const confirm = numberOf(scenario.refundConfirmed.messageId);
    // The profile's outstanding commitments (the buffer may quote our reply that made the promise).
    const shownOpen = turns.filter((t) => t.prompt.includes('"text":"refund the duplicate charge"'));
    // Shown to the turns between the pass that recorded it and the confirmation, never after.
    expect(shownOpen.length).toBeGreaterThan(0);
    expect(shownOpen.every((t) => t.n <= confirm)).toBe(true);
    const listed = await cli(['commitments', '--json', '--customer', scenario.customer], inspected.dataDir);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    const all = await cli(['commitments', '--json', '--all'], inspected.dataDir);
    expect(JSON.parse(all.stdout)).toEqual([
      expect.objectContaining({ text: 'refund the duplicate charge', status: 'fulfilled', due_at: friday.toISOString() }),
    ]);
  }, 300_000);
});

describe('long history through the offline provider', () => {
  let inspected: Inspected;

  beforeAll(async () => {
    inspected = await replayInto(undefined, {});
  }, 300_000);

  afterAll(async () => {
    if (inspected) await rm(path.dirname(inspected.dataDir), { recursive: true, force: true });
  });

  sharedChecks(() => inspected);

  it('reads the phone and the company from message 1 by its rules', () => {
    const active = profileOf(inspected.report).facts.filter((f) => f.status === 'active');
    expect(active.find((f) => f.key === 'phone')?.value).toBe('+44 20 7946 0321');
    expect(active.find((f) => f.key === 'company')?.value).toBe('Northwind Traders');
  });
});
