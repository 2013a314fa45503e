/**
 * Hostile and broken mail through the whole live pipeline (ingest, worker, SMTP): every file is
 * processed or kept with a reason, nothing crashes or hangs, memory stays bounded, and no header
 * injected by a customer ever appears in an outgoing reply.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateHostileCorpus } from '../../fixtures/emails/hostile/generate.ts';
import type { IngestResult } from '../../src/ingest/ingest-message.ts';
import { startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';

const HOSTILE = path.resolve(import.meta.dirname, '../../fixtures/emails/hostile');
const expectations = z.array(
  z.object({
    file: z.string(),
    generated: z.boolean(),
    expect: z.enum(['processed', 'malformed', 'skipped']),
    skipReason: z.string().nullable(),
    mustNotAppearInReplyHeaders: z.array(z.string()).optional(),
  }),
);

let h: AgentHarness;
let generatedDir: string;
const results = new Map<string, IngestResult>();
let peakRss = 0;

beforeAll(async () => {
  h = await startAgentHarness({ REPLY_MAX_AGE: '36500d' });
  // The "model" echoes nothing from the mail into headers; the product builds every header itself.
  h.llm.setFallback(() => ({ kind: 'json', content: turnAnswer({ body: 'We received your message.' }) }));
  generatedDir = await mkdtemp(path.join(os.tmpdir(), 'sa-hostile-'));
  await generateHostileCorpus(generatedDir);
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  try {
    const files = [
      ...(await readdir(HOSTILE)).filter((f) => f.endsWith('.eml')).map((f) => path.join(HOSTILE, f)),
      ...(await readdir(generatedDir)).filter((f) => f.endsWith('.eml')).map((f) => path.join(generatedDir, f)),
    ].sort();
    for (const file of files) results.set(path.basename(file), await h.ingest((await readFile(file)).toString('latin1'), { enqueue: true }));
  } finally {
    clearInterval(sampler);
  }
}, 300_000);

afterAll(async () => {
  await h?.close();
  if (generatedDir) await rm(generatedDir, { recursive: true, force: true });
});

describe('hostile and broken mail', () => {
  it('is either processed or kept with a reason, as the corpus expects', async () => {
    const expected = expectations.parse(JSON.parse(await readFile(path.join(HOSTILE, 'expected.json'), 'utf8')));
    expect(expected.length).toBeGreaterThanOrEqual(30);
    const actual = Object.fromEntries(expected.map((e) => [e.file, results.get(e.file) ? `${results.get(e.file)!.outcome}:${results.get(e.file)!.skipReason}` : 'missing']));
    const wanted = Object.fromEntries(
      expected.map((e) => [e.file, e.expect === 'processed' ? 'processed:null' : e.expect === 'malformed' ? 'skipped:malformed' : `skipped:${e.skipReason}`]),
    );
    expect(actual).toEqual(wanted);
    const kept = await h.runtime.db.message.count({ where: { direction: 'inbound' } });
    const duplicates = [...results.values()].filter((r) => r.skipReason === 'duplicate').length;
    expect(kept).toBe(results.size - duplicates);
  });

  it('keeps malformed mail raw, with the reason', async () => {
    const malformed = await h.runtime.db.message.findMany({ where: { skipReason: 'malformed' }, include: { raw: true } });
    expect(malformed.length).toBeGreaterThan(0);
    for (const m of malformed) {
      expect(m.skipDetail).toMatch(/\S/);
      expect(m.raw).not.toBeNull();
    }
  });

  it('answers every processed message without crashing a turn, and never lets an injected header out', async () => {
    await waitFor(() => h.runtime.db.message.count({ where: { status: { in: ['pending_reply', 'in_turn'] } } }), (n) => n === 0, 120_000, 'every turn to finish');
    const turns = await h.runtime.db.turn.findMany({ select: { status: true, error: true } });
    expect(turns.filter((t) => !['drafted', 'needs_human', 'skipped'].includes(t.status))).toEqual([]);
    const queued = await h.runtime.db.draft.count({ where: { status: { in: ['queued', 'sending'] } } });
    await waitFor(() => h.runtime.db.draft.count({ where: { status: 'sent' } }), (n) => n >= queued, 60_000, 'replies to be sent');
    const sent = await h.smtp.waitForMessages(await h.runtime.db.draft.count({ where: { status: 'sent' } }));
    expect(sent.length).toBeGreaterThan(20);

    const forbidden = expectations
      .parse(JSON.parse(await readFile(path.join(HOSTILE, 'expected.json'), 'utf8')))
      .flatMap((e) => e.mustNotAppearInReplyHeaders ?? []);
    expect(forbidden.length).toBeGreaterThan(0);
    for (const mail of sent) {
      const raw = mail.raw.toString('latin1');
      const headerBlock = raw.slice(0, raw.search(/\r?\n\r?\n/));
      for (const needle of forbidden) expect(headerBlock).not.toContain(needle);
      expect(headerBlock).not.toMatch(/^(bcc|cc):/im);
      expect(mail.envelope.to).toHaveLength(1);
    }
    // Each reply goes to the answered message's Reply-To or From, never to an address smuggled in elsewhere.
    const drafts = await h.runtime.db.draft.findMany({ where: { status: 'sent' }, select: { toAddress: true, inReplyTo: true, turnId: true } });
    for (const draft of drafts) {
      const answered = await h.runtime.db.message.findFirstOrThrow({ where: { turnId: draft.turnId }, orderBy: { receivedAt: 'desc' } });
      expect(draft.toAddress).toBe(answered.replyTo ?? answered.fromAddress);
    }
  });

  it('keeps memory bounded while ingesting a 25 MB attachment, 10,000 headers and 1 MB lines', () => {
    // Node, vitest and the runtime use about 250 MB; holding the 25 MB message a few times over would cross this.
    expect(peakRss).toBeLessThan(1024 * 1024 * 1024);
  });
});
