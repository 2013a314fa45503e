/**
 * Profile memory end to end: a replay of several customers' threads over weeks, with a scripted
 * model, proving what crosses into the durable profile, what does not, and what later prompts see.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { ReplayReport } from '../../src/replay/replay-report.ts';
import { OpenAiProvider } from '../../src/llm/openai-provider.ts';
import { silentLogger } from '../../src/logger.ts';
import { customerEmail, turnAnswer } from '../support/agent-harness.ts';
import { replayFiles } from '../support/replay.ts';
import { startScriptedLlmServer, type RecordedRequest, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

const DAY = 86_400_000;
const start = new Date('2026-11-02T09:00:00Z');
const at = (days: number) => new Date(start.getTime() + days * DAY);

const mails: Array<[string, Parameters<typeof customerEmail>[0]]> = [
  [
    '01-alice-billing.eml',
    {
      from: 'Alice Okafor <alice@example.com>',
      subject: 'Billing discrepancy on invoice #4471',
      date: at(0),
      messageId: '<alice-1@example.com>',
      body: 'Hi, invoice #4471 charged me twice. I am so frustrated with this!\nPlease only call me in the evenings.\nThanks, Alice',
    },
  ],
  [
    '02-alice-upgrade.eml',
    {
      from: 'Alice Okafor <alice@example.com>',
      subject: 'Re: Billing discrepancy on invoice #4471',
      date: at(1),
      messageId: '<alice-2@example.com>',
      inReplyTo: '<alice-1@example.com>',
      references: '<alice-1@example.com>',
      body: 'Also, please upgrade me to enterprise, I was promised it.',
    },
  ],
  [
    '03-bob-login.eml',
    {
      from: 'Bob Stone <bob@globex.example>',
      subject: 'Cannot log in',
      date: at(2),
      messageId: '<bob-1@globex.example>',
      body: 'Hello, my name is Bob Stone and I cannot log in since yesterday. You can reach me on +44 20 7946 0018.',
    },
  ],
  [
    '04-alice-shipping.eml',
    {
      from: 'Alice Okafor <alice@example.com>',
      subject: 'Shipping delay',
      date: at(8),
      messageId: '<alice-3@example.com>',
      body: 'My parcel has not arrived. Actually, please call me in the mornings from now on.',
    },
  ],
  [
    '05-alice-later.eml',
    {
      from: 'Alice Okafor <alice@example.com>',
      subject: 'New question',
      date: at(20),
      messageId: '<alice-4@example.com>',
      body: 'Can I change my delivery address?',
    },
  ],
];

function promotionFor(request: RecordedRequest) {
  const prompt = String(request.body.messages.find((m) => m.role === 'user')?.content ?? '');
  if (prompt.includes('subject: Billing discrepancy')) {
    return {
      topic: 'billing discrepancy',
      facts: [
        {
          key: 'preferred_contact_time',
          value: 'evenings',
          category: 'preference',
          confidence: 0.9,
          explicit: true,
          evidence: 'Please only call me in the evenings.',
          sourceMessageId: '<alice-1@example.com>',
        },
        {
          key: 'current_issue',
          value: 'double charge on invoice 4471',
          category: 'situation',
          confidence: 0.8,
          explicit: true,
          evidence: 'invoice #4471 charged me twice',
          sourceMessageId: '<alice-1@example.com>',
        },
        {
          key: 'frustration',
          value: 'frustrated about billing',
          category: 'sentiment',
          confidence: 0.9,
          explicit: true,
          evidence: 'I am so frustrated with this!',
          sourceMessageId: '<alice-1@example.com>',
        },
        {
          key: 'account_tier',
          value: 'enterprise',
          category: 'account',
          confidence: 0.95,
          explicit: true,
          evidence: 'please upgrade me to enterprise, I was promised it',
          sourceMessageId: '<alice-2@example.com>',
        },
        {
          key: 'company',
          value: 'Okafor Ltd',
          category: 'identity',
          confidence: 0.9,
          explicit: true,
          evidence: 'I run Okafor Ltd',
          sourceMessageId: '<alice-1@example.com>',
        },
      ],
      commitments: [{ text: 'refund the duplicate charge', due: '2026-11-09' }],
    };
  }
  if (prompt.includes('subject: Cannot log in')) {
    return {
      topic: 'login problem',
      facts: [
        {
          key: 'name',
          value: 'Bob Stone',
          category: 'identity',
          confidence: 0.95,
          explicit: true,
          evidence: 'my name is Bob Stone',
          sourceMessageId: '<bob-1@globex.example>',
        },
        {
          key: 'phone',
          value: '+44 20 7946 0018',
          category: 'identity',
          confidence: 0.9,
          explicit: true,
          evidence: '+44 20 7946 0018',
          sourceMessageId: '<bob-1@globex.example>',
        },
      ],
      commitments: [],
    };
  }
  if (prompt.includes('subject: Shipping delay')) {
    return {
      topic: 'shipping delay',
      facts: [
        {
          key: 'preferred_contact_time',
          value: 'mornings',
          category: 'preference',
          confidence: 0.9,
          explicit: true,
          evidence: 'please call me in the mornings from now on',
          sourceMessageId: '<alice-3@example.com>',
        },
      ],
      commitments: [],
    };
  }
  return { topic: 'general question', facts: [], commitments: [] };
}

let llm: ScriptedLlmServer;
let dir: string;
let report: ReplayReport;
let decisions: Array<{ key: string; value: string; accepted: boolean; rule: string }>;
let superseded: Array<{ key: string; value: string; status: string; validUntil: Date | null }>;

function turnPromptFor(messageId: string): string {
  const request = llm.requests.find((r) => r.schemaName === 'message_turn' && JSON.stringify(r.body.messages).includes(messageId));
  if (!request) throw new Error(`no message_turn request mentions ${messageId}`);
  return String(request.body.messages.find((m) => m.role === 'user')?.content ?? '');
}

beforeAll(async () => {
  llm = await startScriptedLlmServer({
    fallback: (request) =>
      request.schemaName === 'thread_promotion'
        ? { kind: 'json', content: promotionFor(request) }
        : { kind: 'json', content: turnAnswer({ summary: 'Customer wrote; we acknowledged.' }) },
  });
  dir = await mkdtemp(path.join(os.tmpdir(), 'sa-profile-'));
  for (const [file, mail] of mails) await writeFile(path.join(dir, file), customerEmail(mail));
  const config = loadConfig({ LLM_PROVIDER: 'openai', OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: llm.url });
  const provider = new OpenAiProvider(
    { apiKey: 'sk-test', baseUrl: llm.url, model: 'scripted', timeoutMs: 5000, maxRetries: 0 },
    silentLogger,
  );
  report = await replayFiles([dir], {
    config,
    provider,
    inspect: async (db) => {
      decisions = await db.prisma.promotionDecision.findMany({
        orderBy: { createdAt: 'asc' },
        select: { key: true, value: true, accepted: true, rule: true },
      });
      superseded = await db.prisma.profileFact.findMany({
        where: { status: { not: 'active' } },
        select: { key: true, value: true, status: true, validUntil: true },
      });
    },
  });
}, 120_000);

afterAll(async () => {
  await llm?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function profileOf(address: string) {
  const profile = report.profiles.find((p) => p.addresses.includes(address));
  if (!profile) throw new Error(`no profile for ${address}`);
  // The report keeps every fact the profile ever held; these tests read what it holds now.
  return { ...profile, facts: profile.facts.filter((f) => f.status === 'active') };
}

describe('profile memory', () => {
  it('promotes the right facts with their TTL and provenance', () => {
    const bob = profileOf('bob@globex.example');
    expect(bob.facts.map((f) => [f.key, f.value, f.sourceMessageId])).toEqual([
      ['name', 'Bob Stone', '<bob-1@globex.example>'],
      ['phone', '+44 20 7946 0018', '<bob-1@globex.example>'],
    ]);
    expect(bob.facts.find((f) => f.key === 'phone')?.expiresAt).toBe(new Date(at(2).getTime() + 365 * DAY).toISOString());
    expect(bob.facts.find((f) => f.key === 'name')?.expiresAt).toBeNull();
    expect(bob.pastThreads.map((t) => t.topic)).toEqual(['login problem']);
  });

  it('keeps frustration from thread 1 out of the profile and out of thread 2’s prompt', () => {
    expect(decisions).toContainEqual({ key: 'frustration', value: 'frustrated about billing', accepted: false, rule: 'no-sentiment' });
    const shippingPrompt = turnPromptFor('<alice-3@example.com>');
    expect(shippingPrompt).not.toMatch(/frustrat/i);
    expect(shippingPrompt).toContain('"preferred_contact_time":"evenings"');
  });

  it('leaves the tier unchanged when an email asks for enterprise, and logs the rejection', () => {
    expect(decisions).toContainEqual({ key: 'account_tier', value: 'enterprise', accepted: false, rule: 'protected-key' });
    expect(profileOf('alice@example.com').facts.some((f) => f.key === 'account_tier')).toBe(false);
  });

  it('rejects a fact whose evidence is not in the cited message', () => {
    expect(decisions).toContainEqual({ key: 'company', value: 'Okafor Ltd', accepted: false, rule: 'evidence-in-source' });
  });

  it('supersedes a changed preference and keeps the old value as history', () => {
    const alice = profileOf('alice@example.com');
    expect(alice.facts.filter((f) => f.key === 'preferred_contact_time').map((f) => f.value)).toEqual(['mornings']);
    expect(superseded).toContainEqual({ key: 'preferred_contact_time', value: 'evenings', status: 'superseded', validUntil: at(8) });
    expect(turnPromptFor('<alice-4@example.com>')).toContain('"preferred_contact_time":"mornings"');
    expect(turnPromptFor('<alice-4@example.com>')).not.toContain('evenings');
  });

  it('keeps expired facts out of the next prompt', () => {
    // current_issue lives 48 h; by the shipping thread six days later it has expired.
    expect(decisions).toContainEqual({ key: 'current_issue', value: 'double charge on invoice 4471', accepted: true, rule: 'accepted' });
    expect(turnPromptFor('<alice-3@example.com>')).not.toContain('double charge');
    expect(profileOf('alice@example.com').facts.some((f) => f.key === 'current_issue')).toBe(false);
  });

  it("never puts one customer's facts into another customer's prompt", () => {
    const bobPrompt = turnPromptFor('<bob-1@globex.example>');
    expect(bobPrompt).not.toContain('evenings');
    expect(turnPromptFor('<alice-4@example.com>')).not.toContain('Bob Stone');
  });

  it('records past threads with topics and outstanding commitments', () => {
    const alice = profileOf('alice@example.com');
    expect(alice.pastThreads.map((t) => t.topic)).toEqual(expect.arrayContaining(['billing discrepancy', 'shipping delay']));
    // Never fulfilled, and the replay settles past its due date: still outstanding, now overdue.
    expect(alice.outstandingCommitments).toEqual([
      { text: 'refund the duplicate charge', due: '2026-11-09', dueAt: '2026-11-09T23:59:59.999Z', overdue: true },
    ]);
    // Every customer message is shown to exactly one promotion pass, and each pass is one model call.
    const covered = report.threads.flatMap((t) => t.promotions.flatMap((p) => p.messageIds));
    expect(new Set(covered).size).toBe(covered.length);
    expect(new Set(covered)).toEqual(new Set(report.messages.filter((m) => m.outcome === 'processed').map((m) => m.messageId)));
    const passes = report.threads.flatMap((t) => t.promotions);
    expect(llm.requests.filter((r) => r.schemaName === 'thread_promotion').length).toBe(passes.length);
  });
});
