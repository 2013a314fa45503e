/**
 * A reply is sent at most once, against the real services: Redis losing its data while a send is
 * in flight, PostgreSQL going away between the SMTP server's acceptance and our record, a send
 * whose claimer died (settled from the IMAP Sent folder, or held for a person). The database is
 * reached through a TCP proxy so a test can take it away without touching the shared server.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleThreadTurn } from '../../src/app/handle-thread-turn.ts';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { ingestRawMessage } from '../../src/ingest/ingest-message.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';
import { sendDraft } from '../../src/outbound/outbox.ts';
import { createSmtpSender } from '../../src/outbound/smtp-sender.ts';
import { startWorkers, type RunningWorkers } from '../../src/app/start-workers.ts';
import { customerEmail, deleteRedisPrefix, REDIS_URL, turnAnswer, waitFor } from '../support/agent-harness.ts';
import { startDovecot, type DovecotServer } from '../support/dovecot.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from '../support/scripted-llm-server.ts';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';

const SUPPORT = 'support@acme.example';
let database: TestDatabase;
let pgProxy: TcpProxy;
let llm: ScriptedLlmServer;
let smtp: SmtpSink;
let dovecot: DovecotServer;
let runtime: Runtime;
let workers: RunningWorkers;
let prefix: string;
const log: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
  pgProxy = await startTcpProxy(5432);
  llm = await startScriptedLlmServer({ fallback: () => ({ kind: 'json', content: turnAnswer() }) });
  smtp = await startSmtpSink();
  dovecot = await startDovecot();
  prefix = `sa-send-${randomBytes(4).toString('hex')}`;
  const url = new URL(database.url);
  url.port = String(pgProxy.port);
  const env = {
    DATABASE_URL: url.toString(),
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    SUPPORT_ADDRESS: SUPPORT,
    LLM_PROVIDER: 'openai',
    OPENAI_API_KEY: 'sk-test-send-once-0001',
    OPENAI_BASE_URL: llm.url,
    REPLY_MODE: 'send',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    IMAP_HOST: dovecot.host,
    IMAP_PORT: String(dovecot.imapPort),
    IMAP_SECURE: 'false',
    IMAP_USER: SUPPORT,
    IMAP_PASSWORD: 'support-pass',
    RECONCILE_INTERVAL: '1h',
    SEND_UNKNOWN_AFTER: '1m',
    REPLY_LIMIT_PER_HOUR: '1000',
    REPLY_LIMIT_PER_DAY: '1000',
  };
  const logger = createLogger('send-once', { level: 'warn', write: (line) => log.push(line) });
  runtime = await openRuntime(loadConfig(env), logger, { longRunning: true });
  workers = await startWorkers(runtime, { reconcileOnStart: false });
}, 120_000);

afterAll(async () => {
  await workers?.close();
  await runtime?.close();
  await llm?.close();
  await smtp?.close();
  await dovecot?.destroy();
  await pgProxy?.close();
  if (prefix) await deleteRedisPrefix(prefix);
  await database?.drop();
});

function ingest(subject: string) {
  return ingestRawMessage(
    runtime.ingestDeps({ logger: silentLogger }),
    Buffer.from(
      customerEmail({ from: `customer-${randomBytes(3).toString('hex')}@example.com`, subject, body: `Question about ${subject}.` }),
    ),
    { kind: 'api' },
  );
}

const draftOf = (threadId: string) =>
  waitFor(
    () => runtime.db.draft.findFirst({ where: { threadId } }),
    (d) => d !== null,
    20_000,
    'a draft',
  );
const copiesOf = (messageId: string) => smtp.messages.filter((m) => m.messageId === messageId).length;

describe('a reply is sent at most once', () => {
  it('when Redis loses its data while the send is in flight and the jobs are rebuilt', async () => {
    const hold = smtp.holdNext();
    const ingested = await ingest('redis loss');
    await hold.received;
    const draft = (await draftOf(ingested.threadId!))!;
    expect(draft.status).toBe('sending');

    await deleteRedisPrefix(prefix); // what FLUSHALL does to our queues
    const report = await runtime.pipeline().reconcile();
    expect(report.sends).toBe(0);
    // Even a duplicate job that reaches the outbox does not send a claimed draft again.
    expect(await sendDraft(runtime.outboxDeps(), draft.id)).toBe('claimed-elsewhere');

    hold.release();
    await waitFor(
      () => runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } }),
      (d) => d.status === 'sent',
      20_000,
      'sent',
    );
    await runtime.pipeline().reconcile();
    expect(await sendDraft(runtime.outboxDeps(), draft.id)).toBe('already-sent');
    expect(copiesOf(draft.messageId)).toBe(1);
  });

  it('when PostgreSQL goes away between the SMTP server’s acceptance and our record', async () => {
    const hold = smtp.holdNext();
    const ingested = await ingest('database outage');
    await hold.received;
    const draft = (await draftOf(ingested.threadId!))!;

    const warningsBefore = log.filter((l) => l.includes('could not record a sent reply')).length;
    const accepted = smtp.messages.length + 1;
    pgProxy.cut();
    hold.release();
    await smtp.waitForMessages(accepted); // the server has accepted it
    await waitFor(
      async () => log.filter((l) => l.includes('could not record a sent reply')).length,
      (n) => n > warningsBefore,
      20_000,
      'a failed record',
    );
    pgProxy.restore();

    await waitFor(
      () => runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } }),
      (d) => d.status === 'sent',
      60_000,
      'sent after the outage',
    );
    await runtime.pipeline().reconcile();
    expect(copiesOf(draft.messageId)).toBe(1);
  }, 90_000);

  it('when the claimer died: a copy in the Sent folder settles it as sent, otherwise a person decides', async () => {
    const inSent = await ingest('found in sent');
    const lost = await ingest('lost send');
    const a = (await waitFor(
      () => runtime.db.draft.findFirst({ where: { threadId: inSent.threadId! } }),
      (d) => d?.status === 'sent',
      20_000,
      'sent',
    ))!;
    const b = (await waitFor(
      () => runtime.db.draft.findFirst({ where: { threadId: lost.threadId! } }),
      (d) => d?.status === 'sent',
      20_000,
      'sent',
    ))!;
    const before = smtp.messages.length;
    // As a worker that died after claiming leaves them: `sending`, claimed long ago.
    const longAgo = new Date(Date.now() - 3_600_000);
    await runtime.db.draft.updateMany({ where: { id: { in: [a.id, b.id] } }, data: { status: 'sending', sendClaimedAt: longAgo } });
    await dovecot.append(
      SUPPORT,
      'Sent',
      [`Message-ID: ${a.messageId}`, `From: ${SUPPORT}`, 'Subject: copy', '', 'the sent copy', ''].join('\r\n'),
    );

    const report = await runtime.pipeline().reconcile();
    expect(report).toMatchObject({ sendsFoundSent: 1, sendsUnknown: 1, sends: 0 });
    expect((await runtime.db.draft.findUniqueOrThrow({ where: { id: a.id } })).status).toBe('sent');
    const held = await runtime.db.draft.findUniqueOrThrow({ where: { id: b.id } });
    expect(held).toMatchObject({ status: 'send_unknown', needsHuman: true });
    expect(held.error).toMatch(/outcome was never recorded/);
    expect(await sendDraft(runtime.outboxDeps(), b.id)).toBe('claimed-elsewhere');
    expect(smtp.messages.length).toBe(before);
  });

  it('holds a send whose connection died after the message may have been handed over', async () => {
    // The message reaches the server, then the connection dies before the server answers.
    const proxy = await startTcpProxy(smtp.port);
    const sender = createSmtpSender({
      host: '127.0.0.1',
      port: proxy.port,
      secure: false,
      rejectUnauthorized: false,
      user: undefined,
      password: undefined,
    });
    try {
      const ingested = await ingestRawMessage(
        runtime.ingestDeps({ logger: silentLogger, pipeline: null }),
        Buffer.from(customerEmail({ from: 'dropped@example.com', subject: 'connection dropped', body: 'Hello?' })),
        { kind: 'api' },
      );
      const outcome = await handleThreadTurn(runtime.turnDeps(), ingested.threadId!);
      expect(outcome).toMatchObject({ kind: 'drafted', queuedToSend: true });
      const draftId = (outcome as { draftId: string }).draftId;
      const hold = smtp.holdNext();
      const sending = sendDraft({ ...runtime.outboxDeps(), sender }, draftId);
      await hold.received;
      proxy.cut();
      await expect(sending).rejects.toMatchObject({ code: 'SMTP_OUTCOME_UNKNOWN' });
      hold.release();
      expect(await runtime.db.draft.findUniqueOrThrow({ where: { id: draftId } })).toMatchObject({
        status: 'send_unknown',
        needsHuman: true,
      });
      expect(await sendDraft(runtime.outboxDeps(), draftId)).toBe('claimed-elsewhere');
    } finally {
      sender.close();
      await proxy.close();
    }
  });

  it('puts a refused send back in the queue, and fails one refused for good, without a second copy', async () => {
    smtp.failNext(1, 451);
    const first = await ingest('temporary refusal');
    const draft = (await draftOf(first.threadId!))!;
    await waitFor(
      () => runtime.db.draft.findUniqueOrThrow({ where: { id: draft.id } }),
      (d) => d.status === 'sent',
      30_000,
      'sent after the retry',
    );
    expect(copiesOf(draft.messageId)).toBe(1);

    smtp.failNext(1, 550);
    const second = await ingest('permanent refusal');
    const refused = (await draftOf(second.threadId!))!;
    const failed = await waitFor(
      () => runtime.db.draft.findUniqueOrThrow({ where: { id: refused.id } }),
      (d) => d.status === 'failed',
      30_000,
      'failed',
    );
    expect(failed.error).toMatch(/550/);
    expect(copiesOf(refused.messageId)).toBe(0);
  }, 60_000);
});
