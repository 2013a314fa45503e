/**
 * Erasure, tried as an attacker would: Alice writes through the real pipeline (mixed-case address,
 * an RFC 2047 display name, a base64 text part, a second linked address), Bob Cc's her and quotes
 * her, the model's notes, drafts, facts and commitments about Bob's thread name her, jobs about
 * her sit in Redis. After `eraseCustomer`, a full `pg_dump --data-only` and a dump of every Redis
 * key under the prefix are decoded every way mail encodes text (bytea hex, base64 at any
 * alignment, quoted-printable, RFC 2047) and searched for every form of her address and name.
 * Bob's and Carol's data must still be there and readable.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import libmime from 'libmime';
import * as libqp from 'libqp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eraseCustomer, type ErasureReport } from '../../src/app/erase-customer.ts';
import { handleThreadTurn } from '../../src/app/handle-thread-turn.ts';
import { ingestSettings } from '../../src/app/ingest-settings.ts';
import { linkAddress } from '../../src/app/link-address.ts';
import { loadPolicyFile } from '../../src/app/policy-file.ts';
import { promoteThread } from '../../src/app/promote-thread.ts';
import { turnSettings } from '../../src/app/turn-settings.ts';
import { loadConfig } from '../../src/config.ts';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { createProvider } from '../../src/llm/create-provider.ts';
import { silentLogger } from '../../src/logger.ts';
import { parseRawEmail } from '../../src/mail/parse-message.ts';
import { type Database } from '../../src/store/database.ts';
import { findEntity } from '../../src/store/entities.ts';
import { ERASED_PROMPT } from '../../src/store/erasure.ts';
import { ensureMailbox } from '../../src/store/mailboxes.ts';
import { REDIS_URL, startAgentHarness, turnAnswer, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import type { RecordedRequest } from '../support/scripted-llm-server.ts';
import { openMigratedMemoryDatabase } from '../support/pglite.ts';

const run = promisify(execFile);

// ---------------------------------------------------------------- what must never be found again

const ADDRESSES = ['alice@alicecorp.example', 'a.ace1987@gmail.com'];
const NAMES = ['Alice Ace', 'Alice B. Ace'];

/** Her address with any of the at-sign spellings mail and the web use, or as a snake_case label. */
const ADDRESS_FORMS =
  /(alice|a\.ace1987)(\+[a-z0-9._-]*)?(@|=40|%40|&#0*64;|&#x0*40;|&commat;|\s?[[(]\s?at\s?[\])]\s?)(alicecorp|gmail)|alice_alicecorp|a_ace1987/i;
const NAME_FORMS = /\balice(?:[\s._+-]|%20|=20|=\r?\n|&nbsp;|\\[nrt]|\u00a0|\bb\.){0,14}ace\b|\bace,\s*alice\b|a\.ace1987/i;

/** Base64 of each needle, at each of the three alignments, in the cases people type: my own derivation. */
function base64Spellings(): string[] {
  const spellings: string[] = [];
  for (const needle of [...ADDRESSES, ...NAMES]) {
    for (const cased of new Set([needle, needle.toLowerCase(), needle.toUpperCase()])) {
      for (let lead = 0; lead < 3; lead++) {
        const encoded = Buffer.concat([Buffer.alloc(lead, 0x20), Buffer.from(cased)]).toString('base64');
        // Drop the characters that also carry bits of the bytes before and after the needle.
        const first = lead === 0 ? 0 : lead + 1;
        const last = Math.floor(((lead + cased.length) * 8) / 6);
        spellings.push(encoded.slice(first, last));
      }
    }
  }
  return spellings;
}

/** The text of a dump plus every decoding of it a reader could apply. */
function decodedViews(dump: string): string {
  const views = [dump];
  // pg_dump writes bytea as \\x<hex> in COPY data.
  for (const m of dump.matchAll(/\\\\x([0-9a-f]{2,})/g)) views.push(Buffer.from(m[1]!, 'hex').toString('latin1'));
  const all = views.join('\n');
  // Base64 runs (line-wrapped in mail, with literal or escaped line breaks), decoded at every offset.
  for (const m of all.matchAll(/(?:[A-Za-z0-9+/]{8,}(?:={0,2})(?:\r?\n|\\r\\n|\\n)?){1,}/g)) {
    const run = m[0].replace(/\\[rn]|[\r\n=]/g, '');
    for (let skip = 0; skip < 4; skip++) {
      const decoded = Buffer.from(run.slice(skip, skip + Math.floor((run.length - skip) / 4) * 4), 'base64');
      views.push(decoded.toString('latin1'), decoded.toString('utf8'));
    }
  }
  views.push(libqp.decode(Buffer.from(all.replace(/\\r\\n/g, '\r\n'), 'latin1')).toString('utf8'));
  views.push(libmime.decodeWords(all));
  return views.join('\n');
}

/** Every mention of Alice in a dump: forms of her address and names, base64 spellings. */
function mentionsOfAlice(dump: string): string[] {
  const found: string[] = [];
  for (const form of base64Spellings()) if (dump.includes(form)) found.push(`base64 ${form}`);
  const views = decodedViews(dump);
  for (const re of [ADDRESS_FORMS, NAME_FORMS]) {
    const m = re.exec(views);
    if (m) found.push(`${re === ADDRESS_FORMS ? 'address' : 'name'}: …${views.slice(Math.max(0, m.index - 60), m.index + 60)}…`);
  }
  return found;
}

async function redisDump(prefix: string): Promise<string> {
  const redis = new Redis(REDIS_URL);
  try {
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        out.push(`KEY ${key} (${type})`);
        if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === 'string') out.push((await redis.get(key)) ?? '');
        else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
        else if (type === 'zset') out.push(...(await redis.zrange(key, '0', '-1')));
        else if (type === 'set') out.push(...(await redis.smembers(key)));
        else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      }
    } while (cursor !== '0');
    return out.join('\n');
  } finally {
    redis.disconnect();
  }
}

// ---------------------------------------------------------------- the mail

const b64lines = (text: string) =>
  Buffer.from(text)
    .toString('base64')
    .replace(/.{1,76}/g, '$&\r\n')
    .trimEnd();
const encodedWord = (text: string) => `=?utf-8?B?${Buffer.from(text).toString('base64')}?=`;

function mail(headers: string[], body: string[]): Buffer {
  return Buffer.from(
    ['To: Acme Support <support@acme.example>', `Date: ${new Date().toUTCString()}`, 'MIME-Version: 1.0', ...headers, '', ...body, ''].join(
      '\r\n',
    ),
  );
}

const ALICE_1 = mail(
  [
    `From: ${encodedWord('Alice Ace')} <Alice@AliceCorp.Example>`,
    'Subject: Invoice INV-4711 is wrong',
    'Message-ID: <alice-1@alicecorp.example>',
    'Content-Type: multipart/alternative; boundary="a1"',
  ],
  [
    '--a1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    b64lines(
      'Hello, this is Alice Ace from accounting.\r\nInvoice INV-4711 charges us twice. Please only call me in the evenings.\r\nAlice\r\n',
    ),
    '--a1',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    b64lines(
      '<p>Hello, this is Alice&nbsp;Ace from accounting.</p><p>Invoice INV-4711 charges us twice. Please only call me in the evenings.</p><p>Alice</p>',
    ),
    '--a1--',
  ],
);

const ALICE_2 = mail(
  [
    'From: "Alice B. Ace" <A.Ace1987@Gmail.com>',
    'Subject: Re: Invoice INV-4711 is wrong',
    'Message-ID: <alice-2@gmail.com>',
    'In-Reply-To: <alice-1@alicecorp.example>',
    'Content-Type: text/plain; charset=utf-8',
  ],
  ['Writing from my private address. Any news on INV-4711?'],
);

const BOB_1 = mail(
  [
    'From: Bob Builder <bob@bobco.example>',
    'Cc: "ALICE ACE" <Alice@AliceCorp.Example>',
    `Subject: ${encodedWord('Access request for Alice Ace')}`,
    'Message-ID: <bob-1@bobco.example>',
    'In-Reply-To: <alice-1@alicecorp.example>',
    'Content-Type: multipart/alternative; boundary="b1"',
  ],
  [
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Hi, access request: please add Alice Ace (alice=40alicecorp.example) to our workspace.',
    'Her private address is a.ace1987@gmail.com; Alice starts on Monday.',
    '',
    'On Monday, Alice Ace <Alice@AliceCorp.Example> wrote:',
    '> Hello, this is Alice Ace from acc=',
    'ounting. Please call me at ali=',
    'ce@alicecorp.example.',
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    b64lines(
      '<p>Hi, access request: please add Alice&nbsp;Ace (<a href="mailto:alice%40alicecorp.example">ALICE@ALICECORP.EXAMPLE</a>) to our workspace.</p>',
    ),
    '--b1--',
  ],
);

/** Alice answers in Bob's thread (she was Cc'd): a turn of Bob's thread carries her words. */
const ALICE_IN_BOBS_THREAD = mail(
  [
    'From: Alice Ace <alice@alicecorp.example>',
    'Cc: Bob Builder <bob@bobco.example>',
    'Subject: Re: Access request',
    'Message-ID: <alice-3@alicecorp.example>',
    'In-Reply-To: <bob-1@bobco.example>',
    'Content-Type: text/plain; charset=utf-8',
  ],
  ['Confirming the access request. My direct line is 555-0199.'],
);

const CAROL_1 = mail(
  [
    'From: Carol Danvers <carol@carolco.example>',
    'Subject: Concert tickets and the Annual plan',
    'Message-ID: <carol-1@carolco.example>',
    'Content-Type: text/plain; charset=utf-8',
  ],
  ['We booked the Alice Cooper concert; Alice from our team asks whether the Annual plan covers the ace of spades tour.'],
);

// ---------------------------------------------------------------- the scripted model

function answerFor(request: RecordedRequest) {
  const text = JSON.stringify(request.body.messages);
  if (request.schemaName === 'thread_promotion') {
    if (text.includes('<bob-1@bobco.example>')) {
      return {
        topic: 'adding Alice Ace as a workspace user',
        facts: [
          {
            key: 'current_issue',
            value: 'add Alice Ace',
            category: 'situation',
            confidence: 0.8,
            explicit: true,
            evidence: 'please add Alice Ace',
            sourceMessageId: '<bob-1@bobco.example>',
          },
          {
            key: 'sentiment',
            value: 'happy with Alice Ace',
            category: 'sentiment',
            confidence: 0.9,
            explicit: false,
            evidence: 'please add Alice Ace',
            sourceMessageId: '<bob-1@bobco.example>',
          },
        ],
        commitments: [{ text: 'add ALICE ACE <alice@alicecorp.example> to the workspace by Monday', due: 'Monday' }],
      };
    }
    return {
      topic: 'double charge on INV-4711 for Alice Ace',
      facts: [
        {
          key: 'preferred_contact_time',
          value: 'evenings',
          category: 'preference',
          confidence: 0.9,
          explicit: true,
          evidence: 'Please only call me in the evenings',
          sourceMessageId: '<alice-1@alicecorp.example>',
        },
      ],
      commitments: [{ text: 'refund the duplicate charge to Alice Ace', due: null }],
    };
  }
  if (text.includes('555-0199')) {
    return turnAnswer({
      body: 'Thanks, noted.',
      summary: 'Bob asked to add Alice Ace; she confirmed by mail (ALICE@alicecorp.example). Alice starts Monday.',
      openItems: ['add Alice Ace as a user'],
      currentIntent: 'add_user Alice@AliceCorp.Example',
      tags: ['user-management', 'Alice Ace'],
    });
  }
  if (text.includes('access request')) {
    return turnAnswer({
      body: 'Hi Bob, we will add Alice Ace (ALICE@ALICECORP.EXAMPLE) shortly. Alice will get an invitation.\n\nAcme Support',
      summary: 'Bob asked to add Alice Ace (alice@alicecorp.example, also a.ace1987@gmail.com) to his workspace; Alice starts Monday.',
      openItems: ['add Alice Ace as a user', 'send Alice an invitation'],
      currentIntent: 'add_user Alice@AliceCorp.Example',
      tags: ['user-management', 'alice-ace'],
    });
  }
  if (text.includes('concert'))
    return turnAnswer({
      body: 'Hi Carol, the Annual plan covers it.',
      summary: 'Carol asked whether the Annual plan covers the Alice Cooper concert tour.',
    });
  return turnAnswer({ body: 'Dear Alice Ace, we are checking INV-4711.', summary: 'Alice Ace reports a double charge on INV-4711.' });
}

// ---------------------------------------------------------------- PostgreSQL and Redis, the real pipeline

describe('erasure on PostgreSQL and Redis, through the real pipeline', () => {
  let h: AgentHarness;
  let report: ErasureReport;
  let pgDump = '';
  let redisText = '';
  const before: Record<string, unknown> = {};
  let bobThreadId = '';
  let aliceThreadId = '';

  beforeAll(async () => {
    h = await startAgentHarness({ REPLY_MODE: 'draft' });
    h.llm.setFallback((request) => ({ kind: 'json', content: answerFor(request) }));
    const db = h.runtime.db;
    const draftsIn = (threadId: string) =>
      waitFor(
        () => db.draft.count({ where: { threadId } }),
        (n) => n >= 1,
        20_000,
        `a draft in ${threadId}`,
      );

    const alice = await h.ingest(ALICE_1.toString('latin1'));
    aliceThreadId = alice.threadId!;
    await draftsIn(alice.threadId!);
    await linkAddress(db, h.runtime.policy, 'a.ace1987@gmail.com', alice.entityId!);
    await h.ingest(ALICE_2.toString('latin1'), { enqueue: false });
    const bob = await h.ingest(BOB_1.toString('latin1'));
    bobThreadId = bob.threadId!;
    expect(bob.threadId).not.toBe(alice.threadId);
    await draftsIn(bob.threadId!);
    const reply = await h.ingest(ALICE_IN_BOBS_THREAD.toString('latin1'));
    expect(reply.threadId).toBe(bob.threadId);
    await waitFor(
      () => db.draft.count({ where: { threadId: bob.threadId! } }),
      (n) => n === 2,
      20_000,
      "the reply to Alice in Bob's thread",
    );
    await promoteThread(h.runtime.promotionDeps(), bob.threadId!, 'operator');
    const carol = await h.ingest(CAROL_1.toString('latin1'));
    await draftsIn(carol.threadId!);
    await promoteThread(h.runtime.promotionDeps(), alice.threadId!, 'operator');

    // Queued work: promotions due later for both threads, and a job of another kind that failed
    // with her address and name in its data, error, stack trace and log.
    await h.runtime.queues().schedulePromotion(alice.threadId!, 'quiet', 3_600_000);
    await h.runtime.queues().schedulePromotion(bob.threadId!, 'quiet', 3_600_000);
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const archive = new Queue('archive', { connection, prefix: h.prefix });
    const worker = new Worker(
      'archive',
      async (job) => {
        await job.log('forwarding to "Alice Ace" <Alice@AliceCorp.Example>');
        throw new Error('550 5.1.1 <ALICE@ALICECORP.EXAMPLE>: Recipient address rejected (Alice Ace)');
      },
      { connection, prefix: h.prefix },
    );
    const failed = new Promise<void>((resolve) => worker.once('failed', () => resolve()));
    await archive.add('forward', { to: 'alice@alicecorp.example', name: 'Alice Ace', thread: bob.threadId }, { attempts: 1 });
    await failed;
    await worker.close();
    await archive.close();
    connection.disconnect();

    // What must survive untouched or merely redacted.
    before['carolMessage'] = await db.message.findFirstOrThrow({
      where: { messageId: '<carol-1@carolco.example>' },
      include: { raw: true },
    });
    before['mentionsBefore'] = mentionsOfAlice(await dumpPostgres(h.env['DATABASE_URL']!));
    before['redisBefore'] = mentionsOfAlice(await redisDump(h.prefix));

    report = await eraseCustomer(db, h.runtime.queues(), alice.entityId!);
    pgDump = await dumpPostgres(h.env['DATABASE_URL']!);
    redisText = await redisDump(h.prefix);
  }, 120_000);

  afterAll(async () => {
    await h?.close();
  });

  it('the dumps held her in every form before, so the search can find what it looks for', () => {
    expect((before['mentionsBefore'] as string[]).length).toBeGreaterThanOrEqual(2);
    expect((before['redisBefore'] as string[]).length).toBeGreaterThanOrEqual(2);
    expect(pgDump).toMatch(/COPY public\."MessageRaw"/);
  });

  it("a full pg_dump holds no form of her address or name, decoded every way, nor what she wrote in Bob's thread", () => {
    expect(mentionsOfAlice(pgDump)).toEqual([]);
    expect(decodedViews(pgDump)).not.toContain('555-0199');
  });

  it('no Redis key under the prefix holds a form of her address or name', () => {
    expect(mentionsOfAlice(redisText)).toEqual([]);
  });

  it('reports what it changed, per table, column and Redis kind, without the values', () => {
    expect(report.deleted).toMatchObject({ Entity: 1, EntityAddress: 2, Thread: 1, ProfileFact: 1, Commitment: 1, PromotionRun: 1 });
    expect(report.deleted['Message']).toBeGreaterThanOrEqual(3);
    for (const column of [
      'Message.bodyText',
      'Message.ccAddresses',
      'Message.subject',
      'Thread.summary',
      'Thread.openItems',
      'Thread.tags',
      'Thread.currentIntent',
      'Thread.topic',
      'Draft.body',
      'Turn.prompt',
      'ProfileFact.value',
      'PromotionDecision.value',
      'PromotionDecision.evidence',
      'Commitment.text',
      'PromotionRun.topic',
      'MessageRaw.raw',
      'Thread.linkedThreadId',
    ]) {
      expect(report.redacted[column], column).toBeGreaterThanOrEqual(1);
    }
    expect(report.replaced).toEqual({ 'Turn.prompt': 1 });
    expect(report.redis).toMatchObject({ jobsRemoved: expect.any(Number), fieldsRedacted: expect.any(Number) });
    expect(report.redis!.jobsRemoved).toBeGreaterThanOrEqual(1);
    expect(report.redis!.fieldsRedacted).toBeGreaterThanOrEqual(3);
    expect(report.redis!.logLinesRedacted).toBe(1);
    expect(report.redis!.eventsRemoved).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(report)).not.toMatch(/alice|ace1987/i);
  });

  it("Bob's thread, message, original, draft, facts and commitments are still there and readable, with her gone even by first name", async () => {
    const db = h.runtime.db;
    const message = await db.message.findFirstOrThrow({ where: { messageId: '<bob-1@bobco.example>' }, include: { raw: true } });
    expect(message.extractedText).toMatch(/please add \[erased\] \(erased@erased\.invalid\) to our workspace/);
    expect(message.ccAddresses).toEqual(['erased@erased.invalid']);
    expect(message.subject).toBe('Access request for [erased]');
    const parsed = await parseRawEmail(Buffer.from(message.raw!.raw));
    expect(parsed.ok).toBe(true);
    if (parsed.ok) {
      expect(parsed.email.from).toEqual({ address: 'bob@bobco.example', name: 'Bob Builder' });
      expect(parsed.email.cc.map((a) => a.address)).toEqual(['erased@erased.invalid']);
      expect(parsed.email.bodyText).toMatch(/please add \[erased\]/);
      expect(parsed.email.html).toMatch(/please add \[erased\]/);
    }
    const thread = await db.thread.findUniqueOrThrow({
      where: { id: bobThreadId },
      include: { drafts: true, turns: true, promotionRuns: true, commitments: true },
    });
    expect(thread.linkedThreadId).toBeNull();
    // Alice's own turn in Bob's thread answered her with the notes withheld (she is not its
    // customer), so the notes are still those of Bob's turn.
    expect(thread.summary).toBe(
      'Bob asked to add [erased] (erased@erased.invalid, also erased@erased.invalid) to his workspace; [erased] starts Monday.',
    );
    expect([thread.currentIntent, thread.tags, thread.openItems]).toEqual([
      'add_user_[erased]',
      ['user_management', '[erased]'],
      ['add [erased] as a user', 'send [erased] an invitation'],
    ]);
    expect(thread.drafts.map((d) => d.toAddress)).toEqual(['bob@bobco.example']);
    expect(thread.drafts[0]?.body).toMatch(/^Hi Bob, we will add \[erased\]/);
    // The turn that carried her message keeps its row and token counts, not its prompt.
    expect(thread.turns.map((t) => t.prompt === ERASED_PROMPT).sort()).toEqual([false, true]);
    expect(thread.turns.find((t) => t.prompt !== ERASED_PROMPT)?.prompt).toMatch(/please add \[erased\]/);
    expect(thread.commitments.map((c) => c.text)).toEqual(['add [erased] <erased@erased.invalid> to the workspace by Monday']);
    const bob = await findEntity(db, 'bob@bobco.example');
    const facts = await db.profileFact.findMany({ where: { entityId: bob!.id } });
    expect(facts.map((f) => [f.key, f.value])).toEqual([['current_issue', 'add [erased]']]);
    const bobText = JSON.stringify([
      message.bodyText,
      message.extractedText,
      thread,
      facts,
      await db.promotionDecision.findMany({ where: { entityId: bob!.id } }),
    ]);
    expect(bobText).not.toMatch(/\balice\b/i);
    expect(Buffer.from(message.raw!.raw).toString('latin1')).not.toMatch(/\balice\b/i);
  });

  it("Carol's mail, which names another Alice, is left exactly as it was", async () => {
    const carol = await h.runtime.db.message.findFirstOrThrow({
      where: { messageId: '<carol-1@carolco.example>' },
      include: { raw: true },
    });
    expect(carol).toEqual(before['carolMessage']);
    expect(carol.bodyText).toMatch(/Alice Cooper concert; Alice from our team/);
  });

  it("Bob's queued promotion is still queued; hers is gone", async () => {
    const delayed = (await h.runtime.queues().promotions.getDelayed()).map((j) => (j.data as { threadId: string }).threadId);
    expect(delayed).toContain(bobThreadId);
    expect(delayed).not.toContain(aliceThreadId);
  });
});

async function dumpPostgres(url: string): Promise<string> {
  const { stdout } = await run('pg_dump', ['--data-only', '--no-owner', '--no-privileges', '--dbname', url], {
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout;
}

// ---------------------------------------------------------------- PGlite, the embedded database

describe('erasure on the embedded PGlite database', () => {
  let database: Database;

  beforeAll(async () => {
    database = await openMigratedMemoryDatabase();
  }, 60_000);

  afterAll(async () => {
    await database?.close();
  });

  it('deletes and redacts with the same SQL, offline provider notes included', async () => {
    const config = loadConfig({ LLM_PROVIDER: 'offline', SUPPORT_ADDRESS: 'support@acme.example' });
    const db = database.prisma;
    const mailbox = await ensureMailbox(db, config.supportAddress);
    const settings = await ingestSettings(config, db);
    const provider = createProvider(config.llm, silentLogger);
    const now = () => new Date();
    const turnDeps = {
      db,
      sql: database.sql,
      mailboxId: mailbox.id,
      provider,
      settings: turnSettings(config, settings.messageIdSecret, settings.supportAddress),
      logger: silentLogger,
      now,
    };
    const ingest = (raw: Buffer) => ingestRawMessage({ sql: database.sql, mailbox, settings, logger: silentLogger }, raw, { kind: 'api' });

    const alice = await ingest(ALICE_1);
    await handleThreadTurn(turnDeps, alice.threadId!);
    await linkAddress(db, await loadPolicyFile(config.memory.policyFile), 'a.ace1987@gmail.com', alice.entityId!);
    const bob = await ingest(BOB_1);
    await handleThreadTurn(turnDeps, bob.threadId!);
    const promotion = {
      db,
      provider,
      policy: await loadPolicyFile(config.memory.policyFile),
      maxActiveFacts: 40,
      cadence: { quietAfterMs: 0, everyMs: 86_400_000, everyMessages: 10 },
      passTokens: 6000,
      logger: silentLogger,
      now,
    };
    await promoteThread(promotion, bob.threadId!, 'operator');
    await promoteThread(promotion, alice.threadId!, 'operator');
    expect(mentionsOfAlice(await dumpPglite(database)).length).toBeGreaterThan(0);

    const report = await eraseCustomer(db, null, alice.entityId!);
    expect(report.redis).toBeNull();
    expect(report.deleted['Entity']).toBe(1);
    expect(report.redacted['MessageRaw.raw']).toBe(1);
    expect(report.redacted['Turn.prompt']).toBe(1);
    expect(mentionsOfAlice(await dumpPglite(database))).toEqual([]);
    const bobMessage = await db.message.findFirstOrThrow({ where: { messageId: '<bob-1@bobco.example>' } });
    expect(bobMessage.extractedText).toMatch(/please add \[erased\]/);
  }, 60_000);
});

/** PGlite has no pg_dump: every row of every table, bytea as hex like pg_dump writes it. */
async function dumpPglite(database: Database): Promise<string> {
  const tables = await database.sql.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'");
  const out: string[] = [];
  for (const { tablename } of tables) {
    const rows = await database.sql.query(`SELECT * FROM "${String(tablename)}"`);
    out.push(
      JSON.stringify(rows, (_k, v: unknown) =>
        typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? `\\\\x${Buffer.from(v).toString('hex')}` : v,
      ),
    );
  }
  return out.join('\n');
}
