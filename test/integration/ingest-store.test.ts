/**
 * Ingestion's plain-SQL storage, on both databases the product runs on: what it writes reads back
 * the same through Prisma, and races with a concurrent writer end in one row, not two or none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestInOrder, ingestRawMessage, type IngestDeps, type IngestSettings } from '../../src/ingest/ingest-message.ts';
import { silentLogger } from '../../src/logger.ts';
import { type Database } from '../../src/store/database.ts';
import { advanceCheckpoint, ensureMailbox, readCheckpoint } from '../../src/store/mailboxes.ts';
import type { SqlExecutor } from '../../src/store/sql.ts';
import { customerEmail } from '../support/agent-harness.ts';
import { createMigratedDatabase } from '../support/postgres.ts';
import { openMigratedMemoryDatabase } from '../support/pglite.ts';

const SETTINGS: IngestSettings = {
  supportAddress: 'support@acme.example',
  entityKey: { mode: 'address' },
  foldPlusAddresses: true,
  subjectWindowMs: 14 * 24 * 3600_000,
  authservId: 'mx.acme.example',
  messageIdSecret: 'ingest-store-test-secret',
  replyMaxAgeMs: 7 * 24 * 3600_000,
};

const backends: Array<{ name: string; open: () => Promise<{ database: Database; close: () => Promise<void> }> }> = [
  {
    name: 'PostgreSQL',
    open: async () => {
      const { database, cleanup } = await createMigratedDatabase();
      return { database, close: cleanup };
    },
  },
  {
    name: 'PGlite',
    open: async () => {
      const database = await openMigratedMemoryDatabase();
      return { database, close: () => database.close() };
    },
  },
];

describe.each(backends)('ingestion storage on $name', ({ open }) => {
  let database: Database;
  let close: () => Promise<void>;
  let deps: IngestDeps;

  beforeAll(async () => {
    ({ database, close } = await open());
    const mailbox = await ensureMailbox(database.prisma, SETTINGS.supportAddress, 'Acme Support');
    deps = { sql: database.sql, mailbox, settings: SETTINGS, logger: silentLogger };
  }, 60_000);

  afterAll(async () => {
    await close?.();
  });

  const ingest = (raw: string | Buffer, d: IngestDeps = deps) =>
    ingestRawMessage(
      d,
      Buffer.isBuffer(raw) ? raw : Buffer.from(raw),
      { kind: 'api' },
      { receivedAt: new Date('2026-11-02T10:00:05Z'), now: new Date('2026-11-02T10:01:00Z') },
    );

  it('stores what Prisma reads back unchanged: times in UTC, lists, raw bytes, the thread and its keys', async () => {
    const raw = Buffer.from(
      customerEmail({
        from: 'Zoë Ångström <zoe+billing@example.org>',
        cc: 'Pat <pat@example.org>',
        subject: 'Invoice 77 – doppelt',
        body: 'Grüße, invoice 77 was charged twice.',
        messageId: '<store-1@example.org>',
        references: '<older-1@example.org>',
        inReplyTo: '<older-1@example.org>',
        date: new Date('2026-11-02T09:59:58Z'),
      }),
    );
    const result = await ingest(raw);
    expect(result).toMatchObject({ outcome: 'processed', stored: true, replyNeeded: true });

    const message = await database.prisma.message.findUniqueOrThrow({
      where: { id: result.id },
      include: { raw: true, thread: { include: { participants: true } } },
    });
    expect(message.sentAt?.toISOString()).toBe('2026-11-02T09:59:58.000Z');
    expect(message.receivedAt.toISOString()).toBe('2026-11-02T10:00:05.000Z');
    expect(message).toMatchObject({
      messageId: '<store-1@example.org>',
      fromAddress: 'zoe+billing@example.org',
      fromName: 'Zoë Ångström',
      ccAddresses: ['pat@example.org'],
      references: ['<older-1@example.org>'],
      subject: 'Invoice 77 – doppelt',
      status: 'pending_reply',
      sizeBytes: raw.length,
    });
    expect(Buffer.from(message.raw!.raw).equals(raw)).toBe(true);
    expect(message.thread!.lastMessageAt.toISOString()).toBe('2026-11-02T09:59:58.000Z');
    expect(message.thread!.participants.map((p) => [p.address, p.role]).sort()).toEqual([
      ['pat@example.org', 'participant'],
      ['zoe+billing@example.org', 'primary'],
    ]);
    const entity = await database.prisma.entity.findUniqueOrThrow({ where: { id: result.entityId! }, include: { addresses: true } });
    expect(entity).toMatchObject({ key: 'zoe@example.org', name: 'Zoë Ångström' });
    expect(entity.addresses.map((a) => a.address)).toEqual(['zoe@example.org']);
    const keys = await database.prisma.threadKey.findMany({ where: { threadId: result.threadId! }, orderBy: { messageId: 'asc' } });
    expect(keys.map((k) => [k.messageId, k.kind])).toEqual([
      ['<older-1@example.org>', 'referenced'],
      ['<store-1@example.org>', 'seen'],
    ]);
  });

  it('the same message ingested twice at once is stored once', async () => {
    const raw = customerEmail({
      from: 'twice@example.org',
      subject: 'Twice',
      body: 'Only once, please.',
      messageId: '<store-twice@example.org>',
    });
    const results = await Promise.all([ingest(raw), ingest(raw)]);
    expect(results.map((r) => r.stored).sort()).toEqual([false, true]);
    expect(results.find((r) => !r.stored)).toMatchObject({ skipReason: 'duplicate', replyNeeded: false });
    expect(await database.prisma.message.count({ where: { messageId: '<store-twice@example.org>' } })).toBe(1);
  });

  it('a customer created by another writer between the look-up and the write ends as one customer with both messages', async () => {
    const first = customerEmail({
      from: 'Race <race@example.org>',
      subject: 'First',
      body: 'First message.',
      messageId: '<store-race-1@example.org>',
    });
    const second = customerEmail({
      from: 'Race <race@example.org>',
      subject: 'Second',
      body: 'Second message.',
      messageId: '<store-race-2@example.org>',
    });
    let interleaved = false;
    // After the first message's look-up (which finds no customer), the second message is stored in full.
    const racing: SqlExecutor = {
      async query(text, params) {
        const rows = await database.sql.query(text, params);
        if (!interleaved && text.includes('linked AS')) {
          interleaved = true;
          await ingest(second);
        }
        return rows;
      },
    };
    const result = await ingest(first, { ...deps, sql: racing });
    expect(interleaved).toBe(true);
    expect(result).toMatchObject({ stored: true, outcome: 'processed' });
    const entities = await database.prisma.entity.findMany({
      where: { key: 'race@example.org' },
      include: { _count: { select: { messages: true } } },
    });
    expect(entities).toHaveLength(1);
    expect(entities[0]!._count.messages).toBe(2);
    expect(result.entityId).toBe(entities[0]!.id);
  });

  it('a fetched chunk is stored in order: a colleague’s reply threads onto the message just before it, and each is reported once stored', async () => {
    const question = customerEmail({
      from: 'chunk@example.org',
      cc: 'chunk-colleague@example.org',
      subject: 'Chunked',
      body: 'Question.',
      messageId: '<store-chunk-1@example.org>',
    });
    const reply = customerEmail({
      from: 'chunk-colleague@example.org',
      subject: 'Re: Chunked',
      body: 'Same question from my colleague.',
      messageId: '<store-chunk-2@example.org>',
      inReplyTo: '<store-chunk-1@example.org>',
      references: '<store-chunk-1@example.org>',
    });
    const seen: Array<[number, number]> = [];
    const results = await ingestInOrder(
      deps,
      [question, reply].map((raw) => ({ raw: Buffer.from(raw), source: { kind: 'api' as const } })),
      async (_result, index) => {
        seen.push([index, await database.prisma.message.count({ where: { messageId: { startsWith: '<store-chunk-' } } })]);
      },
    );
    expect(seen).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(results[1]!.threadId).toBe(results[0]!.threadId);
    expect(results[1]!.entityId).not.toBe(results[0]!.entityId);
  });

  it('a chunk that fails part-way has stored every message it reported, and reports none after the failure', async () => {
    const items = ['a', 'b', 'c', 'd'].map((n) => ({
      raw: Buffer.from(
        customerEmail({ from: `stop-${n}@example.org`, subject: `Stop ${n}`, body: 'Hello.', messageId: `<store-stop-${n}@example.org>` }),
      ),
      source: { kind: 'api' as const },
    }));
    const failing: SqlExecutor = {
      async query(text, params) {
        if (text.includes('INSERT INTO "Message"') && JSON.stringify(params).includes('<store-stop-c@example.org>'))
          throw new Error('the database went away');
        return database.sql.query(text, params);
      },
    };
    const reported: number[] = [];
    await expect(ingestInOrder({ ...deps, sql: failing }, items, (_r, index) => void reported.push(index))).rejects.toThrow(
      'the database went away',
    );
    expect(reported).toEqual([0, 1]);
    const stored = await database.prisma.message.findMany({
      where: { messageId: { startsWith: '<store-stop-' } },
      select: { messageId: true },
    });
    expect(stored.map((m) => m.messageId)).toEqual(expect.arrayContaining(['<store-stop-a@example.org>', '<store-stop-b@example.org>']));
    expect(stored.map((m) => m.messageId)).not.toContain('<store-stop-c@example.org>');
  });

  it(
    'stores unrelated customers side by side and related mail in order, with the same outcome as one at a time',
    { timeout: 10_000 },
    async () => {
      const mails = [
        customerEmail({ from: 'p1@example.org', subject: 'Printer', body: 'My printer is broken.', messageId: '<side-1@example.org>' }),
        customerEmail({ from: 'p2@example.org', subject: 'Refund', body: 'Refund please.', messageId: '<side-2@example.org>' }),
        customerEmail({
          from: 'p1@example.org',
          subject: 'Re: Printer',
          body: 'Still broken.',
          messageId: '<side-3@example.org>',
          inReplyTo: '<side-1@example.org>',
        }),
        customerEmail({ from: 'p3@example.org', subject: 'Login', body: 'Cannot log in.', messageId: '<side-4@example.org>' }),
        customerEmail({ from: 'p2@example.org', subject: 'Refund', body: 'Any news?', messageId: '<side-5@example.org>' }),
      ];
      // The first customer's write is held until the second customer's look-up arrives: only a
      // side-by-side ingester gets there (one storing in sequence would wait forever and time out).
      let releaseFirstWrite = () => {};
      const firstWriteHeld = new Promise<void>((resolve) => (releaseFirstWrite = resolve));
      const counting: SqlExecutor = {
        async query(text, params) {
          const body = JSON.stringify(params);
          if (text.includes('linked AS') && body.includes('p2@example.org')) releaseFirstWrite();
          if (text.includes('INSERT INTO "Message"') && body.includes('<side-1@example.org>')) await firstWriteHeld;
          return database.sql.query(text, params);
        },
      };
      const results = await ingestInOrder(
        { ...deps, sql: counting },
        mails.map((raw) => ({ raw: Buffer.from(raw), source: { kind: 'api' as const } })),
      );
      expect(results.map((r) => r.messageId)).toEqual([
        '<side-1@example.org>',
        '<side-2@example.org>',
        '<side-3@example.org>',
        '<side-4@example.org>',
        '<side-5@example.org>',
      ]);
      expect(results[2]!.threadId).toBe(results[0]!.threadId);
      expect(results[4]!.threadId).toBe(results[1]!.threadId);
      expect(new Set(results.map((r) => r.threadId)).size).toBe(3);
      expect(results[2]!.entityId).toBe(results[0]!.entityId);
    },
  );

  it('IMAP UIDs above 2^31 (they are unsigned 32-bit) are stored, and the checkpoint holds them', async () => {
    const uid = 4_000_000_000;
    const raw = Buffer.from(
      customerEmail({ from: 'uid@example.org', subject: 'Big UID', body: 'Hello.', messageId: '<store-big-uid@example.org>' }),
    );
    const result = await ingestRawMessage(deps, raw, { kind: 'imap', folder: 'INBOX', uid });
    expect(result.stored).toBe(true);
    expect((await database.prisma.message.findUniqueOrThrow({ where: { id: result.id } })).imapUid).toBe(BigInt(uid));
    await advanceCheckpoint(database.prisma, deps.mailbox.id, 'INBOX', 7n, uid);
    expect(await readCheckpoint(database.prisma, deps.mailbox.id, 'INBOX')).toEqual({ uidValidity: 7n, lastUid: uid });
  });

  it('a value the database refuses keeps the message raw as malformed, with the reason, instead of failing on every retry', async () => {
    const raw = Buffer.from(
      customerEmail({ from: 'refused@example.org', subject: 'Refused', body: 'Hello.', messageId: '<store-refused@example.org>' }),
    );
    const refusing: SqlExecutor = {
      async query(text, params) {
        if (text.includes(`'pending_reply'`) || JSON.stringify(params).includes('pending_reply')) {
          throw Object.assign(new Error('unsupported Unicode escape sequence'), { code: '22P05' });
        }
        return database.sql.query(text, params);
      },
    };
    const result = await ingest(raw, { ...deps, sql: refusing });
    expect(result).toMatchObject({ stored: true, outcome: 'skipped', skipReason: 'malformed' });
    expect(result.skipDetail).toMatch(/could not be stored: .*unsupported Unicode escape sequence/);
    const row = await database.prisma.message.findUniqueOrThrow({ where: { id: result.id }, include: { raw: true } });
    expect(row.status).toBe('malformed');
    expect(Buffer.from(row.raw!.raw).equals(raw)).toBe(true);
  });

  it('mail that cannot be parsed is kept raw as malformed, once', async () => {
    const raw = Buffer.from('this is not an email at all\x00\x01', 'latin1');
    const first = await ingest(raw);
    const again = await ingest(raw);
    expect(first).toMatchObject({ stored: true, skipReason: 'malformed' });
    expect(again).toMatchObject({ stored: false, skipReason: 'duplicate', id: first.id });
    const row = await database.prisma.message.findUniqueOrThrow({ where: { id: first.id }, include: { raw: true } });
    expect(row.status).toBe('malformed');
    expect(Buffer.from(row.raw!.raw).equals(raw)).toBe(true);
  });
});
