/**
 * Tags that act, end to end through the real `openai` client and the scripted server: facts and
 * commitments get the thread's tags at promotion; a `resolved` tag lifetime (p0) ends the thread's
 * situation facts and open commitments when it resolves, and a duration tag lifetime (promo: 30d)
 * replaces the TTL; each turn records why each profile fact was or was not in its prompt.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { OpenAiProvider } from '../../src/llm/openai-provider.ts';
import { silentLogger } from '../../src/logger.ts';
import { customerEmail, turnAnswer } from '../support/agent-harness.ts';
import { replayFiles } from '../support/replay.ts';
import { startScriptedLlmServer, type RecordedRequest, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const start = new Date('2026-11-02T09:00:00Z');
const at = (hours: number) => new Date(start.getTime() + hours * HOUR);

const mails: Array<[string, Parameters<typeof customerEmail>[0]]> = [
  [
    '01-dana-outage.eml',
    {
      from: 'Dana Kim <dana@initech.example>',
      subject: 'Exports are down',
      date: at(0),
      messageId: '<dana-1@initech.example>',
      body: 'Hello, my name is Dana Kim. All our exports are failing since this morning and the board meets at noon.',
    },
  ],
  [
    '02-dana-fixed.eml',
    {
      from: 'Dana Kim <dana@initech.example>',
      subject: 'Re: Exports are down',
      date: at(3),
      messageId: '<dana-2@initech.example>',
      inReplyTo: '<dana-1@initech.example>',
      references: '<dana-1@initech.example>',
      body: 'That worked, exports run again. The export of the old report still looks slow though. You can close this.',
    },
  ],
  [
    '03-evan-promo.eml',
    {
      from: 'Evan Ruiz <evan@hooli.example>',
      subject: 'Spring promotion',
      date: at(24),
      messageId: '<evan-1@hooli.example>',
      body: 'Hi, we are evaluating the reporting module for our team of twelve during your spring offer. Who do I talk to?',
    },
  ],
];

const userPrompt = (request: RecordedRequest) => String(request.body.messages.find((m) => m.role === 'user')?.content ?? '');

function fact(key: string, value: string, category: string, evidence: string, sourceMessageId: string) {
  return { key, value, category, confidence: 0.9, explicit: true, evidence, sourceMessageId };
}

function promotionFor(request: RecordedRequest) {
  const prompt = userPrompt(request);
  if (prompt.includes('<dana-2@initech.example>')) {
    return {
      topic: 'export outage',
      facts: [
        fact(
          'current_issue',
          'slow export of the old report',
          'situation',
          'The export of the old report still looks slow',
          '<dana-2@initech.example>',
        ),
      ],
      commitments: [{ text: 'look at the slow old report export', due: null }],
    };
  }
  if (prompt.includes('<dana-1@initech.example>')) {
    return {
      topic: 'export outage',
      facts: [
        fact('name', 'Dana Kim', 'identity', 'my name is Dana Kim', '<dana-1@initech.example>'),
        fact('current_issue', 'exports failing', 'situation', 'All our exports are failing since this morning', '<dana-1@initech.example>'),
      ],
      commitments: [{ text: 'send an update every hour until exports run', due: null }],
    };
  }
  if (prompt.includes('<evan-1@hooli.example>')) {
    return {
      topic: 'spring promotion',
      facts: [
        fact(
          'current_issue',
          'evaluating the reporting module',
          'situation',
          'we are evaluating the reporting module',
          '<evan-1@hooli.example>',
        ),
      ],
      commitments: [{ text: 'send the promotion terms', due: null }],
    };
  }
  return { topic: 'general question', facts: [], commitments: [] };
}

function turnFor(request: RecordedRequest) {
  const prompt = userPrompt(request);
  const newEmail = prompt.slice(prompt.indexOf('NEW EMAIL TO ANSWER'));
  if (newEmail.includes('<dana-2@initech.example>')) return turnAnswer({ tags: ['p0', 'bug'], resolved: true, summary: 'Exports fixed.' });
  if (newEmail.includes('<dana-1@initech.example>'))
    return { ...turnAnswer({ tags: ['p0', 'bug'], summary: 'Exports down before a board meeting.' }), checkpoint: { reason: 'outage' } };
  return { ...turnAnswer({ tags: ['promo'], summary: 'Asks about the spring promotion.' }), checkpoint: { reason: 'new topic' } };
}

let llm: ScriptedLlmServer;
let dir: string;
let facts: Array<{ key: string; value: string; status: string; expiresAt: Date | null; validFrom: Date | null; tags: unknown }>;
let commitments: Array<{ text: string; status: string; tags: unknown; closeEvidence: string | null }>;
let decisions: Array<{ key: string; value: string; accepted: boolean; rule: string; reason: string }>;
let traces: Array<{ threadId: string; contextTrace: unknown; startedAt: Date }>;

beforeAll(async () => {
  llm = await startScriptedLlmServer({
    fallback: (request) => ({
      kind: 'json',
      content: request.schemaName === 'thread_promotion' ? promotionFor(request) : turnFor(request),
    }),
  });
  dir = await mkdtemp(path.join(os.tmpdir(), 'sa-tag-lifetimes-'));
  for (const [file, mail] of mails) await writeFile(path.join(dir, file), customerEmail(mail));
  // The shipped policy plus one duration lifetime.
  const policy = JSON.parse(await readFile(path.resolve(import.meta.dirname, '../../config/promotion-policy.json'), 'utf8'));
  policy.tags.lifetimes.promo = { ttl: '30d', categories: ['situation'] };
  const policyFile = path.join(dir, 'policy.json');
  await writeFile(policyFile, JSON.stringify(policy));
  const config = loadConfig({
    LLM_PROVIDER: 'openai',
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.url,
    PROMOTION_POLICY_FILE: policyFile,
  });
  const provider = new OpenAiProvider(
    { apiKey: 'sk-test', baseUrl: llm.url, model: 'scripted', timeoutMs: 5000, maxRetries: 0 },
    silentLogger,
  );
  await replayFiles([path.join(dir, '01-dana-outage.eml'), path.join(dir, '02-dana-fixed.eml'), path.join(dir, '03-evan-promo.eml')], {
    config,
    provider,
    inspect: async (db) => {
      facts = await db.prisma.profileFact.findMany({
        orderBy: { createdAt: 'asc' },
        select: { key: true, value: true, status: true, expiresAt: true, validFrom: true, tags: true },
      });
      commitments = await db.prisma.commitment.findMany({
        orderBy: { createdAt: 'asc' },
        select: { text: true, status: true, tags: true, closeEvidence: true },
      });
      decisions = await db.prisma.promotionDecision.findMany({
        orderBy: { createdAt: 'asc' },
        select: { key: true, value: true, accepted: true, rule: true, reason: true },
      });
      traces = await db.prisma.turn.findMany({
        orderBy: { startedAt: 'asc' },
        select: { threadId: true, contextTrace: true, startedAt: true },
      });
    },
  });
}, 120_000);

afterAll(async () => {
  await llm?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const factOf = (value: string) => facts.find((f) => f.value === value);

describe('tags at promotion', () => {
  it('facts carry the tags of the thread they were learnt in', () => {
    expect(factOf('Dana Kim')?.tags).toEqual(['p0', 'bug']);
    expect(factOf('evaluating the reporting module')?.tags).toEqual(['promo']);
  });

  it('commitments carry them too', () => {
    expect(commitments.find((c) => c.text.startsWith('send an update'))?.tags).toEqual(['p0', 'bug']);
    expect(commitments.find((c) => c.text === 'send the promotion terms')?.tags).toEqual(['promo']);
  });
});

describe('a p0 thread’s items end when it resolves', () => {
  it('the situation recorded while the outage was open expired at resolution, valid until then', () => {
    const issue = factOf('exports failing');
    expect(issue?.status).toBe('expired');
    // It would have lived 48 h; it ended when the thread resolved, three hours in.
    expect(issue!.expiresAt!.getTime() - issue!.validFrom!.getTime()).toBeLessThan(48 * HOUR);
  });

  it('the name from the same thread stays (identity is not in p0’s categories)', () => {
    expect(factOf('Dana Kim')?.status).toBe('active');
  });

  it('the resolving pass does not record a new p0 situation, and says why', () => {
    expect(factOf('slow export of the old report')).toBeUndefined();
    const rejected = decisions.find((d) => d.value === 'slow export of the old report');
    expect(rejected).toMatchObject({ accepted: false, rule: 'expired-before-promotion' });
    expect(rejected!.reason).toContain('tagged p0');
  });

  it('the open promise of the outage is cancelled, naming the tag', () => {
    const update = commitments.find((c) => c.text.startsWith('send an update'));
    expect(update?.status).toBe('cancelled');
    expect(update?.closeEvidence).toContain('tag p0');
    // So is the promise the resolving pass read: it ends with the thread it was made in.
    expect(commitments.find((c) => c.text === 'look at the slow old report export')?.status).toBe('cancelled');
  });
});

describe('a duration tag lifetime', () => {
  it('replaces the situation TTL (promo: 30d instead of 48 h), with the tag in the decision', () => {
    const promo = factOf('evaluating the reporting module');
    expect(promo?.expiresAt!.getTime()).toBe(at(24).getTime() + 30 * DAY);
    expect(decisions.find((d) => d.value === 'evaluating the reporting module')?.reason).toContain('lives 30d (tag promo)');
  });

  it('leaves commitments of the thread open', () => {
    expect(commitments.find((c) => c.text === 'send the promotion terms')?.status).toBe('open');
  });
});

describe('the inclusion trace each turn records', () => {
  it('says why each profile fact was in the resolving turn’s prompt, and the tags it ordered by', () => {
    const turns = traces.filter((t) => t.contextTrace !== null);
    expect(turns).toHaveLength(3);
    const second = turns[1]!.contextTrace as { tags: string[]; facts: Array<{ key: string; verdict: string; reason: string }> };
    expect(second.tags).toEqual(['p0', 'bug']);
    expect(second.facts.map((f) => [f.key, f.verdict])).toEqual(
      expect.arrayContaining([
        ['name', 'included'],
        ['current_issue', 'included'],
      ]),
    );
    expect(second.facts.find((f) => f.key === 'current_issue')!.reason).toContain('tag overlap p0, bug');
  });

  it('the first turn had an empty profile', () => {
    expect((traces[0]!.contextTrace as { facts: unknown[] }).facts).toEqual([]);
  });
});
