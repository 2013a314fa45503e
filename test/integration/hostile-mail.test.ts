/**
 * Hostile and broken mail through the whole live pipeline (ingest, worker, SMTP): every file is
 * processed or kept with a reason, nothing crashes or hangs, memory stays bounded, and no header
 * injected by a customer ever appears in an outgoing reply. Files are ingested byte for byte.
 * The only time bound is vitest's per-test (and hook) timeout: a step that is super-linear on one
 * of these mails fails the test by never finishing in time.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { generateHostileCorpus, generateOversizedMail, OVERSIZED_BODY_BYTES } from '../../fixtures/emails/hostile/generate.ts';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  ingestInOrder,
  ingestRawMessage,
  TOO_LARGE_KEEP_BYTES,
  type IngestDeps,
  type IngestResult,
} from '../../src/ingest/ingest-message.ts';
import { DEFAULT_PARSE_SETTINGS, ParsePool, sharedParsePool } from '../../src/ingest/parse-pool.ts';
import { MAX_BODY_TEXT_CHARS, MAX_NEW_TEXT_CHARS } from '../../src/ingest/read-message.ts';
import { silentLogger } from '../../src/logger.ts';
import { tryAcquireLease } from '../../src/queue/redis-lease.ts';
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
/** Beyond the hostile corpus: a 50 MB body (over the cap) and the largest mail the cap allows. */
const OVERSIZED = '53-body-50mb.eml';
const LARGEST_ALLOWED = '54-largest-allowed.eml';
const MARK = /\n\n\[… cut here: longer than [\d,]+ characters\]$/;

function ingestDeps(): IngestDeps {
  return {
    sql: h.runtime.database.sql,
    mailbox: h.runtime.mailbox,
    settings: h.runtime.ingest,
    logger: silentLogger,
    onReplyNeeded: (threadId: string) => h.runtime.queues().enqueueTurn(threadId),
  };
}

beforeAll(async () => {
  h = await startAgentHarness({ REPLY_MAX_AGE: '36500d' });
  // The "model" echoes nothing from the mail into headers; the product builds every header itself.
  h.llm.setFallback(() => ({ kind: 'json', content: turnAnswer({ body: 'We received your message.' }) }));
  generatedDir = await mkdtemp(path.join(os.tmpdir(), 'sa-hostile-'));
  await generateHostileCorpus(generatedDir);
  await generateOversizedMail(generatedDir, OVERSIZED, OVERSIZED_BODY_BYTES, 53);
  await generateOversizedMail(generatedDir, LARGEST_ALLOWED, DEFAULT_MAX_MESSAGE_BYTES - 1024, 54);
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  try {
    const files = [
      ...(await readdir(HOSTILE)).filter((f) => f.endsWith('.eml')).map((f) => path.join(HOSTILE, f)),
      ...(await readdir(generatedDir)).filter((f) => f.endsWith('.eml')).map((f) => path.join(generatedDir, f)),
    ].sort();
    for (const file of files) results.set(path.basename(file), await ingestRawMessage(ingestDeps(), await readFile(file), { kind: 'api' }));
  } finally {
    clearInterval(sampler);
  }
}, 600_000);

afterAll(async () => {
  await h?.close();
  if (generatedDir) await rm(generatedDir, { recursive: true, force: true });
});

describe('hostile and broken mail', () => {
  it('is either processed or kept with a reason, as the corpus expects', async () => {
    const expected = expectations.parse(JSON.parse(await readFile(path.join(HOSTILE, 'expected.json'), 'utf8')));
    expect(expected.length).toBeGreaterThanOrEqual(30);
    const actual = Object.fromEntries(
      expected.map((e) => [e.file, results.get(e.file) ? `${results.get(e.file)!.outcome}:${results.get(e.file)!.skipReason}` : 'missing']),
    );
    const wanted = Object.fromEntries(
      expected.map((e) => [
        e.file,
        e.expect === 'processed' ? 'processed:null' : e.expect === 'malformed' ? 'skipped:malformed' : `skipped:${e.skipReason}`,
      ]),
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
    await waitFor(
      () => h.runtime.db.message.count({ where: { status: { in: ['pending_reply', 'in_turn'] } } }),
      (n) => n === 0,
      120_000,
      'every turn to finish',
    );
    const turns = await h.runtime.db.turn.findMany({ select: { status: true, error: true } });
    expect(turns.filter((t) => !['drafted', 'needs_human', 'skipped'].includes(t.status))).toEqual([]);
    const queued = await h.runtime.db.draft.count({ where: { status: { in: ['queued', 'sending'] } } });
    await waitFor(
      () => h.runtime.db.draft.count({ where: { status: 'sent' } }),
      (n) => n >= queued,
      60_000,
      'replies to be sent',
    );
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
    const drafts = await h.runtime.db.draft.findMany({
      where: { status: 'sent' },
      select: { toAddress: true, inReplyTo: true, turnId: true },
    });
    for (const draft of drafts) {
      const answered = await h.runtime.db.message.findFirstOrThrow({ where: { turnId: draft.turnId }, orderBy: { receivedAt: 'desc' } });
      expect(draft.toAddress).toBe(answered.replyTo ?? answered.fromAddress);
    }
  });

  it('keeps a message above MAX_MESSAGE_BYTES unparsed, its first 1 MiB raw, and never answers it', async () => {
    expect(results.get(OVERSIZED)).toMatchObject({ stored: true, outcome: 'skipped', skipReason: 'too-large', replyNeeded: false });
    const row = await h.runtime.db.message.findFirstOrThrow({ where: { id: results.get(OVERSIZED)!.id }, include: { raw: true } });
    expect(row).toMatchObject({
      status: 'skipped',
      classification: 'too-large',
      messageId: '<hostile-53@customer.example>',
      fromAddress: 'alice@customer.example',
    });
    expect(row.subject).toMatch(/^Log dump/);
    expect(row.skipDetail).toBe(
      `${OVERSIZED_BODY_BYTES.toLocaleString('en-US')} bytes, more than MAX_MESSAGE_BYTES (${DEFAULT_MAX_MESSAGE_BYTES.toLocaleString('en-US')}): ` +
        `not parsed; the first ${TOO_LARGE_KEEP_BYTES.toLocaleString('en-US')} bytes are kept`,
    );
    expect(row.raw!.raw.length).toBe(TOO_LARGE_KEEP_BYTES);
    expect(Buffer.from(row.raw!.raw).equals((await readFile(path.join(generatedDir, OVERSIZED))).subarray(0, TOO_LARGE_KEEP_BYTES))).toBe(
      true,
    );
    expect(row.bodyText).toBe('');
    expect(row.threadId).toBeNull();
    // The same mail again is a duplicate, not a second copy.
    const again = await ingestRawMessage(ingestDeps(), await readFile(path.join(generatedDir, OVERSIZED)), { kind: 'api' });
    expect(again).toMatchObject({ stored: false, skipReason: 'duplicate' });
  });

  it('processes the largest mail the cap allows, with its stored texts capped', async () => {
    expect(results.get(LARGEST_ALLOWED)).toMatchObject({ stored: true, outcome: 'processed' });
    const row = await h.runtime.db.message.findFirstOrThrow({ where: { id: results.get(LARGEST_ALLOWED)!.id }, include: { raw: true } });
    expect(row.raw!.raw.length).toBe(DEFAULT_MAX_MESSAGE_BYTES - 1024);
    expect(row.bodyText).toMatch(MARK);
    expect(row.extractedText).toMatch(MARK);
  });

  it('caps every stored new text and body text before any later step reads it', async () => {
    const rows = await h.runtime.db.message.findMany({
      where: { direction: 'inbound' },
      select: { messageId: true, bodyText: true, extractedText: true },
    });
    for (const row of rows) {
      expect(row.extractedText.length, row.messageId).toBeLessThanOrEqual(MAX_NEW_TEXT_CHARS + 60);
      expect(row.bodyText.length, row.messageId).toBeLessThanOrEqual(MAX_BODY_TEXT_CHARS + 60);
    }
    const text = async (file: string) =>
      (await h.runtime.db.message.findFirstOrThrow({ where: { id: results.get(file)!.id } })).extractedText;
    // The parser cuts the 3.3 MB of HTML at 2,000,000 characters, inside a closing tag: its "</" is text.
    expect(await text('48-html-nested-300000-deep.eml')).toMatch(/^Deep text: please help me with my invoice\.\n<\/$/);
    expect(await text('50-quote-767kb-many-lines.eml')).toBe('Thanks, that did not help. Can you look again?');
    expect(await text('51-quote-767kb-one-line.eml')).toMatch(/^Thanks, that did not help\. Can you look again\?\n\n>0>>>>/);
    expect(await text('51-quote-767kb-one-line.eml')).toMatch(MARK);
    expect(await text('52-html-blockquote-767kb.eml')).toMatch(MARK);
    expect(await text('49-combining-marks-150000.eml')).toMatch(/^Hi, my invoice looks like this: a\u0301\u0301/);
  });

  it('keeps memory bounded while ingesting a 25 MB attachment, a 50 MB body, the largest allowed mail, 10,000 headers and 1 MB lines', () => {
    // Node, vitest and the runtime use about 250 MB; holding the large messages a few times over would cross this.
    expect(peakRss).toBeLessThan(1024 * 1024 * 1024);
  });
});

describe('parsing off the main thread', () => {
  it('keeps renewing a Redis lease, as the poller does, while a worker parses the 300,000-deep HTML mail', async () => {
    const pool = sharedParsePool(h.runtime.ingest.parsing ?? DEFAULT_PARSE_SETTINGS, silentLogger) as ParsePool;
    const deep = (await readFile(path.join(generatedDir, '48-html-nested-300000-deep.eml')))
      .toString('latin1')
      .replace('<hostile-48@', '<hostile-48-lease@');
    const lease = await tryAcquireLease(h.runtime.redis(), `${h.prefix}:lease-under-parse`, 2_000);
    if (!lease) throw new Error('the test lease is taken');
    let parsing = false;
    const renewals: Array<{ held: boolean; duringParse: boolean }> = [];
    const timer = setInterval(() => {
      // Runs on the main thread: each call shows the thread was free at that moment.
      const duringParse = parsing;
      void lease.renew().then((held) => renewals.push({ held, duringParse }));
    }, 20);
    let result: IngestResult;
    try {
      result = await ingestRawMessage(
        {
          ...ingestDeps(),
          reader: {
            read: async (raw) => {
              parsing = true;
              try {
                return await pool.read(raw);
              } finally {
                parsing = false;
              }
            },
            readHeaders: (head) => pool.readHeaders(head),
          },
        },
        Buffer.from(deep, 'latin1'),
        { kind: 'api' },
      );
    } finally {
      clearInterval(timer);
      await lease.release();
    }
    expect(pool.inProcess).toBe(false);
    expect(result).toMatchObject({
      outcome: 'processed',
      text: expect.stringMatching(/^Deep text: please help me with my invoice\./) as string,
    });
    expect(renewals.filter((r) => r.duringParse).length).toBeGreaterThan(0);
    expect(renewals.every((r) => r.held)).toBe(true);
  });
});

describe('ingestion with a message it cannot or will not parse', () => {
  const plain = (n: string, from = 'dana@customer.example') =>
    Buffer.from(
      `From: Dana <${from}>\r\nTo: support@acme.example\r\nSubject: Order ${n}\r\nDate: Mon, 03 Nov 2025 11:00:00 +0000\r\n` +
        `Message-ID: <order-${n}@customer.example>\r\nContent-Type: text/plain\r\n\r\nWhere is order ${n}?\r\n`,
    );

  it('stores a fetched chunk in order when one of its messages is over the cap and only its start was fetched', async () => {
    const head = Buffer.concat([plain('big'), Buffer.alloc(10_000, 'x')]);
    const reported: number[] = [];
    const results = await ingestInOrder(
      ingestDeps(),
      [
        { raw: plain('a'), source: { kind: 'imap', folder: 'INBOX', uid: 101 } },
        { raw: head, source: { kind: 'imap', folder: 'INBOX', uid: 102 }, options: { totalBytes: DEFAULT_MAX_MESSAGE_BYTES + 1 } },
        { raw: plain('c'), source: { kind: 'imap', folder: 'INBOX', uid: 103 } },
      ],
      (_result, index) => void reported.push(index),
    );
    expect(reported).toEqual([0, 1, 2]);
    expect(results.map((r) => `${r.outcome}:${r.skipReason}`)).toEqual(['processed:null', 'skipped:too-large', 'processed:null']);
    expect(results[1]).toMatchObject({ messageId: '<order-big@customer.example>', replyNeeded: false });
    const row = await h.runtime.db.message.findFirstOrThrow({ where: { id: results[1]!.id }, include: { raw: true } });
    expect(row).toMatchObject({ subject: 'Order big', imapUid: 102n, fromAddress: 'dana@customer.example' });
    expect(row.skipDetail).toMatch(/^41,943,041 bytes, more than MAX_MESSAGE_BYTES/);
    expect(row.raw!.raw.length).toBe(head.length);
  });

  it('keeps a message whose parsing never ends raw as malformed, with the reason', async () => {
    const stuck = new ParsePool(
      { workers: 1, timeoutMs: 1_000, memoryMb: 128 },
      silentLogger,
      new URL('../support/misbehaving-parse-worker.mjs', import.meta.url),
    );
    try {
      const raw = Buffer.concat([Buffer.from('SPIN'), plain('stuck')]);
      const result = await ingestRawMessage({ ...ingestDeps(), reader: stuck }, raw, { kind: 'api' });
      expect(result).toMatchObject({ stored: true, outcome: 'skipped', skipReason: 'malformed', replyNeeded: false });
      const row = await h.runtime.db.message.findFirstOrThrow({ where: { id: result.id }, include: { raw: true } });
      expect(row.skipDetail).toBe('parsing took longer than 1000 ms; the parse worker was stopped');
      expect(Buffer.from(row.raw!.raw).equals(raw)).toBe(true);
    } finally {
      await stuck.close();
    }
  });
});
