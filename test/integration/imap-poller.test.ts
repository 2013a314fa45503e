/**
 * The IMAP poller against a real Dovecot: delivery over LMTP and APPEND, restarts, UIDVALIDITY
 * changes, dropped connections; and the agent's drafts landing in the real Drafts folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOO_LARGE_KEEP_BYTES } from '../../src/ingest/ingest-message.ts';
import { MailboxPoller, PROCESSED_KEYWORD, type FetchedMessage } from '../../src/imap/mailbox-poller.ts';
import { createPollerStore } from '../../src/imap/poller-store.ts';
import { silentLogger } from '../../src/logger.ts';
import { ensureMailbox } from '../../src/store/mailboxes.ts';
import { ingestFetched, startPoller } from '../../src/app/start-poller.ts';
import { customerEmail, startAgentHarness, waitFor, type AgentHarness } from '../support/agent-harness.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';

const SUPPORT = 'support@acme.example';
let dovecot: DovecotServer;
let h: AgentHarness;
let poller: MailboxPoller | null = null;

beforeAll(async () => {
  dovecot = await startDovecot();
  h = await startAgentHarness({
    REPLY_MODE: 'draft',
    IMAP_HOST: dovecot.host,
    IMAP_PORT: String(dovecot.imapPort),
    IMAP_SECURE: 'false',
    IMAP_USER: SUPPORT,
    IMAP_PASSWORD: 'support-pass',
    IMAP_POLL_INTERVAL: '2s',
  });
  h.llm.setFallback(() => ({
    kind: 'json',
    content: {
      reply: { body: 'Thanks, we are on it.', needsHuman: false },
      summary: 's',
      openItems: [],
      currentIntent: 'q',
      tags: [],
      resolved: false,
    },
  }));
}, 60_000);

afterAll(async () => {
  await poller?.stop();
  await h?.close();
  await dovecot?.destroy();
});

const stored = (messageId: string) => h.runtime.db.message.count({ where: { messageId } });
const inboundCount = () => h.runtime.db.message.count({ where: { direction: 'inbound' } });

async function waitStored(messageId: string, what = messageId): Promise<void> {
  await waitFor(
    () => stored(messageId),
    (n) => n === 1,
    30_000,
    `${what} to be ingested`,
  );
}

function mail(n: string, extra: Partial<Parameters<typeof customerEmail>[0]> = {}): { raw: string; id: string } {
  const id = `<imap-${n}@customer.example>`;
  return {
    raw: customerEmail({
      from: `Customer ${n} <c${n}@customer.example>`,
      subject: `Question ${n}`,
      body: `Question number ${n}.`,
      messageId: id,
      ...extra,
    }),
    id,
  };
}

describe('the IMAP poller', () => {
  it('ingests mail delivered over LMTP without marking it read, and puts the agent’s draft in the Drafts folder', async () => {
    const first = mail('1');
    await dovecot.deliver(SUPPORT, first.raw);
    poller = startPoller(h.runtime);
    await waitStored(first.id);

    const inbox = await dovecot.list(SUPPORT, 'INBOX');
    expect(inbox).toHaveLength(1);
    expect(inbox[0]!.flags).not.toContain('\\Seen');

    const drafts = await waitFor(
      () => dovecot.list(SUPPORT, 'Drafts'),
      (d) => d.length === 1,
      30_000,
      'the IMAP draft',
    );
    const raw = drafts[0]!.raw.toString('utf8');
    expect(raw).toMatch(/^In-Reply-To: <imap-1@customer\.example>/m);
    expect(raw).toMatch(/^Subject: Re: Question 1/m);
    // A person sends it: it must not go out marked as automatic.
    expect(raw).not.toMatch(/^Auto-Submitted:/m);
    expect(raw).not.toMatch(/^X-Auto-Response-Suppress:/m);
    expect(raw).toMatch(/^X-Support-Agent: draft/m);
    expect(drafts[0]!.flags).toContain('\\Draft');
    // The APPEND lands in Dovecot a moment before the outbox records it, so wait for the record.
    const draft = await waitFor(
      () => h.runtime.db.draft.findFirstOrThrow({ where: { inReplyTo: first.id } }),
      (d) => d.imapAppendedAt !== null,
      30_000,
      'the draft to be recorded as appended',
    );
    expect(draft.status).toBe('draft');
  });

  it('ingests mail a person already opened (APPEND with \\Seen), found by UID not by unread state', async () => {
    const opened = mail('2');
    await dovecot.append(SUPPORT, 'INBOX', opened.raw, ['\\Seen']);
    await waitStored(opened.id);
  });

  it('ingests nothing twice after the poller restarts', async () => {
    await poller!.stop();
    const before = await inboundCount();
    const third = mail('3');
    await dovecot.deliver(SUPPORT, third.raw);
    poller = startPoller(h.runtime);
    await waitStored(third.id);
    expect(await inboundCount()).toBe(before + 1);
  });

  it('resynchronises by Message-ID after a UIDVALIDITY change, without duplicates', async () => {
    const before = await inboundCount();
    const checkpoint = await h.runtime.db.mailboxCheckpoint.findFirstOrThrow({ where: { folder: 'INBOX' } });
    const newValidity = await dovecot.changeUidValidity(SUPPORT, 'INBOX');
    expect(newValidity).not.toBe(checkpoint.uidValidity);
    const fourth = mail('4');
    await dovecot.deliver(SUPPORT, fourth.raw);
    await waitStored(fourth.id);
    await waitFor(
      () => h.runtime.db.mailboxCheckpoint.findFirstOrThrow({ where: { folder: 'INBOX' } }),
      (c) => c.uidValidity === newValidity,
      30_000,
      'the checkpoint to take the new UIDVALIDITY',
    );
    expect(await inboundCount()).toBe(before + 1);
  });

  it('recovers from a dropped connection and from a server restart', async () => {
    await dovecot.dropConnections(SUPPORT);
    const fifth = mail('5');
    await dovecot.deliver(SUPPORT, fifth.raw);
    await waitStored(fifth.id, 'mail after a dropped connection');

    await dovecot.restart();
    const sixth = mail('6');
    await dovecot.deliver(SUPPORT, sixth.raw);
    await waitStored(sixth.id, 'mail after a server restart');
    const status = await h.runtime.db.mailbox.findFirstOrThrow({ where: { address: SUPPORT } });
    expect(status.pollerConnected).toBe(true);
  });

  it('lets only one of two pollers serve the mailbox', async () => {
    const second = startPoller(h.runtime);
    try {
      await new Promise<void>((resolve) => second.once('lease-waiting', () => resolve()));
      const before = await inboundCount();
      const batch = ['7', '8', '9'].map((n) => mail(n));
      for (const m of batch) await dovecot.deliver(SUPPORT, m.raw);
      for (const m of batch) await waitStored(m.id);
      expect(await inboundCount()).toBe(before + 3);
    } finally {
      await second.stop();
    }
  });

  it.each(['flag', 'move'] as const)('optionally marks processed mail: %s', async (action) => {
    const address = 'other@acme.example';
    const folder = action === 'move' ? 'Processed' : 'INBOX';
    const mailbox = await ensureMailbox(h.runtime.db, `${action}-${address}`);
    const own = new MailboxPoller({
      imap: {
        host: dovecot.host,
        port: dovecot.imapPort,
        secure: false,
        rejectUnauthorized: true,
        user: address,
        password: 'other-pass',
        folders: ['INBOX'],
        pollIntervalMs: 2000,
        idle: true,
        processedAction: action,
        processedFolder: 'Processed',
      },
      store: createPollerStore(h.runtime.db, mailbox.id),
      ingest: ingestFetched({
        sql: h.runtime.database.sql,
        mailbox,
        settings: { ...h.runtime.ingest, supportAddress: address },
        logger: silentLogger,
      }),
      logger: silentLogger,
    });
    const message = mail(`${action}-processed`);
    await dovecot.deliver(address, message.raw);
    own.start();
    try {
      await waitStored(message.id);
      const marked = await waitFor(
        () => dovecot.list(address, folder),
        (list) => list.some((m) => m.raw.toString().includes(message.id) && (action === 'move' || m.flags.includes(PROCESSED_KEYWORD))),
        30_000,
        `the message to be ${action === 'move' ? 'moved' : 'flagged'}`,
      );
      expect(marked.length).toBeGreaterThan(0);
      if (action === 'move') expect((await dovecot.list(address, 'INBOX')).some((m) => m.raw.toString().includes(message.id))).toBe(false);
    } finally {
      await own.stop();
    }
  });

  it('fetches only the start of a message above MAX_MESSAGE_BYTES, keeps it as too-large and moves on', async () => {
    const address = 'other@acme.example';
    const mailbox = await ensureMailbox(h.runtime.db, `too-large-${address}`);
    const folder = `Large${Date.now()}`;
    const limit = 2_000_000;
    const big = mail('too-large', {
      body: `Here is the whole log.\n${'2025-11-03 10:00:00 worker-7 INFO nothing unusual in this line\n'.repeat(50_000)}`,
    });
    expect(big.raw.length).toBeGreaterThan(limit);
    const after = mail('after-too-large');
    await dovecot.append(address, folder, big.raw);
    await dovecot.append(address, folder, after.raw);
    const handed: Array<{ bytes: number; size: number | undefined }> = [];
    const settings = { ...h.runtime.ingest, supportAddress: address, maxMessageBytes: limit };
    const ingest = ingestFetched({ sql: h.runtime.database.sql, mailbox, settings, logger: silentLogger });
    const own = new MailboxPoller({
      imap: {
        host: dovecot.host,
        port: dovecot.imapPort,
        secure: false,
        rejectUnauthorized: true,
        user: address,
        password: 'other-pass',
        folders: [folder],
        pollIntervalMs: 2000,
        idle: true,
        processedAction: 'none',
        processedFolder: 'Processed',
      },
      store: createPollerStore(h.runtime.db, mailbox.id),
      ingest: (messages: readonly FetchedMessage[], storedUid) => {
        handed.push(...messages.map((m) => ({ bytes: m.raw.length, size: m.size })));
        return ingest(messages, storedUid);
      },
      maxMessageBytes: limit,
      logger: silentLogger,
    });
    own.start();
    try {
      // The two are unrelated, so ingestion may store them side by side: wait for both.
      await waitStored(after.id, 'the message after the large one');
      await waitStored(big.id, 'the large message');
      const row = await h.runtime.db.message.findFirstOrThrow({
        where: { mailboxId: mailbox.id, subject: 'Question too-large' },
        include: { raw: true },
      });
      expect(row).toMatchObject({
        skipReason: 'too-large',
        status: 'skipped',
        fromAddress: 'ctoo-large@customer.example',
        messageId: big.id,
      });
      expect(row.skipDetail).toMatch(/more than MAX_MESSAGE_BYTES \(2,000,000\): not parsed; the first 1,048,576 bytes are kept/);
      expect(row.raw?.raw.length).toBe(TOO_LARGE_KEEP_BYTES);
      // The poller handed over only the start of the large message: it never downloaded the rest.
      expect(handed).toEqual([
        { bytes: TOO_LARGE_KEEP_BYTES, size: expect.any(Number) as number },
        { bytes: expect.any(Number) as number, size: expect.any(Number) as number },
      ]);
      expect(handed[0]!.size).toBeGreaterThan(limit);
      expect(await h.runtime.db.draft.count({ where: { inReplyTo: big.id } })).toBe(0);
      // The checkpoint moves once the chunk is stored, just after the rows appear.
      await waitFor(
        () => h.runtime.db.mailboxCheckpoint.findFirst({ where: { mailboxId: mailbox.id, folder } }),
        (checkpoint) => checkpoint?.lastUid === 2n,
        30_000,
        'the checkpoint past both messages',
      );
    } finally {
      await own.stop();
    }
  });

  it('without IDLE, notices mail that arrives in a folder that was empty when it connected', async () => {
    const address = 'other@acme.example';
    const mailbox = await ensureMailbox(h.runtime.db, `polling-${address}`);
    const folder = `Empty${Date.now()}`;
    await dovecot.append(address, folder, mail('seed').raw);
    // Make the folder empty again: only a later delivery counts.
    const seeded = await dovecot.list(address, folder);
    expect(seeded).toHaveLength(1);
    const own = new MailboxPoller({
      imap: {
        host: dovecot.host,
        port: dovecot.imapPort,
        secure: false,
        rejectUnauthorized: true,
        user: address,
        password: 'other-pass',
        folders: [folder],
        pollIntervalMs: 300,
        idle: false,
        processedAction: 'move',
        processedFolder: 'Processed',
      },
      store: createPollerStore(h.runtime.db, mailbox.id),
      ingest: ingestFetched({
        sql: h.runtime.database.sql,
        mailbox,
        settings: { ...h.runtime.ingest, supportAddress: address },
        logger: silentLogger,
      }),
      logger: silentLogger,
    });
    own.start();
    try {
      // The seed is ingested and moved away, leaving the folder empty for this session.
      await waitFor(
        () => dovecot.list(address, folder),
        (list) => list.length === 0,
        30_000,
        'the folder to be emptied',
      );
      const later = mail('after-empty');
      await dovecot.append(address, folder, later.raw);
      await waitStored(later.id);
    } finally {
      await own.stop();
    }
  });
});
