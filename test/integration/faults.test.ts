/**
 * Faults with real processes and real services: a worker killed mid-turn, Redis losing its data,
 * PostgreSQL going away under the poller, an IMAP connection cut mid-fetch and a server restart,
 * and two workers plus two pollers on one mailbox. The agent runs as `support-agent` child
 * processes; proxies on loopback take services away without touching the shared servers.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { silentLogger } from '../../src/logger.ts';
import { customerEmail, deleteRedisPrefix, REDIS_URL, turnAnswer, waitFor } from '../support/agent-harness.ts';
import { startAgentProcess, type AgentProcess } from '../support/agent-process.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const SUPPORT = 'support@acme.example';
const SECRETS = { smtp: 'smtp-Secret-Passw0rd', apiKey: 'sk-live-Secret-Key-7c1e9b', imap: 'support-pass' };

let database: TestDatabase;
let dovecot: DovecotServer;
let llm: ScriptedLlmServer;
let smtp: SmtpSink;
let pgProxy: TcpProxy;
let imapProxy: TcpProxy;
let runtime: Runtime;
let prefix: string;
let env: Record<string, string>;
const processes: AgentProcess[] = [];
const allOutput: string[] = [];

function spawnAgent(command: string, overrides: Record<string, string> = {}): AgentProcess {
  const agent = startAgentProcess([command], { ...env, ...overrides });
  processes.push(agent);
  void agent.exited.then(() => allOutput.push(agent.output()));
  return agent;
}

beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
  dovecot = await startDovecot();
  llm = await startScriptedLlmServer({ fallback: () => ({ kind: 'json', content: turnAnswer() }) });
  smtp = await startSmtpSink({ requireAuth: true, user: 'agent', password: SECRETS.smtp });
  pgProxy = await startTcpProxy(5432);
  imapProxy = await startTcpProxy(dovecot.imapPort);
  prefix = `sa-faults-${randomBytes(4).toString('hex')}`;
  env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    SUPPORT_ADDRESS: SUPPORT,
    LLM_PROVIDER: 'openai',
    OPENAI_API_KEY: SECRETS.apiKey,
    OPENAI_BASE_URL: llm.url,
    OPENAI_MAX_RETRIES: '1',
    REPLY_MODE: 'send',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    SMTP_USER: 'agent',
    SMTP_PASSWORD: SECRETS.smtp,
    IMAP_HOST: dovecot.host,
    IMAP_PORT: String(dovecot.imapPort),
    IMAP_SECURE: 'false',
    IMAP_USER: SUPPORT,
    IMAP_PASSWORD: SECRETS.imap,
    IMAP_POLL_INTERVAL: '2s',
    WORKER_LOCK_DURATION: '2s',
    RECONCILE_INTERVAL: '3s',
    REPLY_LIMIT_PER_HOUR: '1000',
    REPLY_LIMIT_PER_DAY: '1000',
  };
  runtime = await openRuntime(loadConfig(env), silentLogger, { longRunning: true });
}, 120_000);

afterEach(async () => {
  // A failed test must not leave a poller holding the mailbox's lease for the next one.
  await Promise.all(processes.splice(0).map((p) => p.kill('SIGKILL').then(() => undefined)));
});

afterAll(async () => {
  await runtime?.close();
  await llm?.close();
  await smtp?.close();
  await pgProxy?.close();
  await imapProxy?.close();
  await dovecot?.destroy();
  if (prefix) await deleteRedisPrefix(prefix);
  await database?.drop();
});

function ingest(raw: string) {
  return ingestRawMessage(runtime.ingestDeps({ logger: silentLogger }), Buffer.from(raw), { kind: 'api' });
}

const sentTo = (messageId: string) => smtp.messages.filter((m) => m.headers.get('in-reply-to') === messageId);
const stored = (messageId: string) => runtime.db.message.count({ where: { messageId } });

async function stopCleanly(agent: AgentProcess): Promise<void> {
  expect(await agent.kill('SIGTERM')).toBe(0);
}

describe('faults', () => {
  it('a worker killed with SIGKILL mid-turn: the turn is retried, exactly one reply goes out, thread state is consistent', async () => {
    const first = spawnAgent('work');
    await first.waitForLog(/workers started/);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const before = llm.requests.length;
    llm.setFallback(async (request) => {
      if (JSON.stringify(request.body.messages).includes('kill-me-mid-turn') && !killed) await held;
      return { kind: 'json', content: turnAnswer({ summary: 'Customer asked about order 77.' }) };
    });
    let killed = false;
    const message = await ingest(
      customerEmail({ from: 'kim@customer.example', subject: 'Order 77', body: 'Where is order 77? kill-me-mid-turn' }),
    );
    await llm.waitForRequests(before + 1, 30_000);
    await first.kill('SIGKILL');
    killed = true;
    release();

    const second = spawnAgent('work');
    await waitFor(
      () => runtime.db.draft.findMany({ where: { threadId: message.threadId! } }),
      (d) => d.length === 1 && d[0]!.status === 'sent',
      60_000,
      'the retried turn to send',
    );
    await smtp.waitForMessages(1);
    expect(sentTo(message.messageId)).toHaveLength(1);
    const turns = await runtime.db.turn.findMany({ where: { threadId: message.threadId! } });
    expect(turns.map((t) => t.status)).toEqual(['drafted']);
    const thread = await runtime.db.thread.findUniqueOrThrow({ where: { id: message.threadId! } });
    expect(thread).toMatchObject({ summary: 'Customer asked about order 77.', version: 1 });
    expect(await runtime.db.message.findUniqueOrThrow({ where: { id: message.id } })).toMatchObject({
      status: 'replied',
      turnId: turns[0]!.id,
    });
    await stopCleanly(second);
  }, 120_000);

  it('Redis losing its data while messages are pending: every turn is rebuilt from PostgreSQL and answered once', async () => {
    llm.setFallback(() => ({ kind: 'json', content: turnAnswer() }));
    const pending = [];
    for (const n of [1, 2, 3])
      pending.push(await ingest(customerEmail({ from: `lost${n}@customer.example`, subject: `Lost ${n}`, body: `Pending message ${n}.` })));
    expect(await deleteRedisPrefix(prefix)).toBeGreaterThan(0);

    const worker = spawnAgent('work');
    for (const message of pending) {
      await waitFor(
        async () => sentTo(message.messageId).length,
        (n) => n >= 1,
        60_000,
        `the reply to ${message.messageId}`,
      );
    }
    await waitFor(
      () => runtime.db.draft.count({ where: { status: { in: ['queued', 'sending'] } } }),
      (n) => n === 0,
      30_000,
      'the outbox to drain',
    );
    for (const message of pending) expect(sentTo(message.messageId)).toHaveLength(1);
    await stopCleanly(worker);
  }, 120_000);

  it('PostgreSQL unavailable under the poller: the checkpoint does not pass unsaved mail, and everything arrives once it is back', async () => {
    const poller = spawnAgent('poll', { DATABASE_URL: database.url.replace(':5432/', `:${pgProxy.port}/`) });
    const a = customerEmail({
      from: 'pg-a@customer.example',
      subject: 'PG A',
      body: 'Before the outage.',
      messageId: '<pg-a@customer.example>',
    });
    await dovecot.deliver(SUPPORT, a);
    await waitFor(
      () => stored('<pg-a@customer.example>'),
      (n) => n === 1,
      60_000,
      'mail before the outage',
    );
    const checkpoint = await waitFor(
      () => runtime.db.mailboxCheckpoint.findFirst({ where: { folder: 'INBOX' } }),
      (c) => c !== null && c.lastUid > 0,
      30_000,
      'the checkpoint to pass the stored mail',
    );

    pgProxy.cut();
    await dovecot.deliver(
      SUPPORT,
      customerEmail({ from: 'pg-b@customer.example', subject: 'PG B', body: 'During the outage.', messageId: '<pg-b@customer.example>' }),
    );
    await dovecot.deliver(
      SUPPORT,
      customerEmail({ from: 'pg-c@customer.example', subject: 'PG C', body: 'Also during.', messageId: '<pg-c@customer.example>' }),
    );
    await poller.waitForLog(/IMAP session failed/, 60_000);
    expect((await runtime.db.mailboxCheckpoint.findFirstOrThrow({ where: { folder: 'INBOX' } })).lastUid).toBe(checkpoint!.lastUid);

    pgProxy.restore();
    for (const id of ['<pg-b@customer.example>', '<pg-c@customer.example>'])
      await waitFor(
        () => stored(id),
        (n) => n === 1,
        60_000,
        `${id} after the outage`,
      );
    // The checkpoint moves once the fetched messages are stored; wait for it to pass both.
    await waitFor(
      () => runtime.db.mailboxCheckpoint.findFirstOrThrow({ where: { folder: 'INBOX' } }),
      (c) => c.lastUid === checkpoint!.lastUid + 2n,
      30_000,
      'the checkpoint to pass both messages',
    );
    expect(await runtime.db.message.count({ where: { messageId: { in: ['<pg-b@customer.example>', '<pg-c@customer.example>'] } } })).toBe(
      2,
    );
    await stopCleanly(poller);
  }, 120_000);

  it('an IMAP connection cut mid-fetch and a server restart: nothing missed, nothing twice', async () => {
    const poller = spawnAgent('poll', { IMAP_PORT: String(imapProxy.port) });
    await poller.waitForLog(/IMAP connected/);
    const before = await runtime.db.message.count({ where: { direction: 'inbound', source: 'imap' } });
    imapProxy.dropAfter(150_000);
    const big = Array.from({ length: 6 }, (_, i) =>
      customerEmail({
        from: `big${i}@customer.example`,
        subject: `Big ${i}`,
        body: `Log follows.\n${'x'.repeat(76).concat('\n').repeat(1300)}`,
        messageId: `<big-${i}@customer.example>`,
      }),
    );
    for (const raw of big) await dovecot.deliver(SUPPORT, raw);
    for (let i = 0; i < big.length; i++)
      await waitFor(
        () => stored(`<big-${i}@customer.example>`),
        (n) => n === 1,
        60_000,
        `big message ${i}`,
      );
    expect(imapProxy.midTransferDrops).toBe(1);

    await dovecot.restart();
    await dovecot.deliver(
      SUPPORT,
      customerEmail({
        from: 'restart@customer.example',
        subject: 'After restart',
        body: 'Hello again.',
        messageId: '<after-restart@customer.example>',
      }),
    );
    await waitFor(
      () => stored('<after-restart@customer.example>'),
      (n) => n === 1,
      60_000,
      'mail after the server restart',
    );
    expect(await runtime.db.message.count({ where: { direction: 'inbound', source: 'imap' } })).toBe(before + 7);
    await stopCleanly(poller);
  }, 120_000);

  it('two workers and two pollers on one mailbox: every message is stored once and every turn has one reply', async () => {
    const agents = [spawnAgent('work'), spawnAgent('work'), spawnAgent('poll'), spawnAgent('poll')];
    await Promise.all(agents.slice(0, 2).map((a) => a.waitForLog(/workers started/)));
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const root = `<pair-${i}@customer.example>`;
      await dovecot.deliver(
        SUPPORT,
        customerEmail({ from: `pair${i}@customer.example`, subject: `Pair ${i}`, body: `Question ${i}.`, messageId: root }),
      );
      await dovecot.deliver(
        SUPPORT,
        customerEmail({
          from: `pair${i}@customer.example`,
          subject: `Re: Pair ${i}`,
          body: `Follow-up ${i}.`,
          messageId: `<pair-${i}-b@customer.example>`,
          inReplyTo: root,
          references: root,
        }),
      );
      ids.push(root, `<pair-${i}-b@customer.example>`);
    }
    await waitFor(
      () => runtime.db.message.findMany({ where: { messageId: { in: ids } }, select: { status: true } }),
      (rows) => rows.length === ids.length && rows.every((r) => r.status === 'replied'),
      90_000,
      'every message to be answered',
    );
    await waitFor(
      () => runtime.db.draft.count({ where: { status: { in: ['queued', 'sending'] } } }),
      (n) => n === 0,
      30_000,
      'the outbox to drain',
    );
    const messages = await runtime.db.message.findMany({ where: { messageId: { in: ids } }, select: { turnId: true, threadId: true } });
    const turnIds = [...new Set(messages.map((m) => m.turnId))];
    const drafts = await runtime.db.draft.findMany({ where: { turnId: { in: turnIds as string[] } } });
    expect(drafts).toHaveLength(turnIds.length);
    expect(new Set(messages.map((m) => m.threadId)).size).toBe(4);
    const mails = smtp.messages.filter((m) => drafts.some((d) => d.messageId === m.messageId));
    expect(mails).toHaveLength(drafts.length);
    for (const agent of agents) await stopCleanly(agent);
  }, 180_000);

  it('never writes a password or API key to its logs, even when logins fail', async () => {
    const wrong = spawnAgent('poll', { IMAP_PASSWORD: 'wrong-Imap-Passw0rd-91' });
    await wrong.waitForLog(/IMAP session failed/, 60_000);
    await wrong.kill('SIGTERM');
    const logs = [...allOutput, ...processes.map((p) => p.output())].join('\n');
    expect(logs.length).toBeGreaterThan(1000);
    for (const secret of [SECRETS.smtp, SECRETS.apiKey, SECRETS.imap, 'wrong-Imap-Passw0rd-91']) expect(logs).not.toContain(secret);
  }, 90_000);
});
