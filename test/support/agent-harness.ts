/**
 * The whole agent in-process against real services: a fresh PostgreSQL database, real Redis under
 * a queue prefix of its own, the scripted LLM server and an SMTP sink, with the real runtime and
 * workers. Everything is removed again by `close()`.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { openRuntime, type Runtime } from '../../src/app/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { ingestRawMessage, type IngestResult } from '../../src/ingest/ingest-message.ts';
import { createLogger, silentLogger } from '../../src/logger.ts';
import { startWorkers, type RunningWorkers } from '../../src/app/start-workers.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { startScriptedLlmServer, type ScriptedLlmServer } from './scripted-llm-server.ts';
import { startSmtpSink, type SmtpSink } from './smtp-sink.ts';

export const REDIS_URL = 'redis://127.0.0.1:6379';

export interface AgentHarness {
  runtime: Runtime;
  llm: ScriptedLlmServer;
  smtp: SmtpSink;
  env: Record<string, string>;
  prefix: string;
  workers: RunningWorkers | null;
  startWorkers(): Promise<RunningWorkers>;
  /** Ingests raw mail through the one entry point, enqueuing the reply turn like the poller. */
  ingest(raw: string, options?: { enqueue?: boolean }): Promise<IngestResult>;
  close(): Promise<void>;
}

export async function startAgentHarness(
  overrides: Record<string, string> = {},
  options: { workers?: boolean } = {},
): Promise<AgentHarness> {
  const database: TestDatabase = await createTestDatabase({ migrated: true });
  const started: Array<() => Promise<void>> = [() => database.drop()];
  try {
    return await startOn(database, started, overrides, options);
  } catch (error) {
    // A harness that fails half-way leaves nothing behind.
    for (const stop of started.reverse()) await stop().catch(() => {});
    throw error;
  }
}

async function startOn(
  database: TestDatabase,
  started: Array<() => Promise<void>>,
  overrides: Record<string, string>,
  options: { workers?: boolean },
): Promise<AgentHarness> {
  const llm = await startScriptedLlmServer();
  started.push(() => llm.close());
  const smtp = await startSmtpSink();
  started.push(() => smtp.close());
  const prefix = `sa-test-${randomBytes(5).toString('hex')}`;
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL,
    QUEUE_PREFIX: prefix,
    SUPPORT_ADDRESS: 'support@acme.example',
    SUPPORT_NAME: 'Acme Support',
    LLM_PROVIDER: 'openai',
    OPENAI_API_KEY: 'sk-test-harness-key-0001',
    OPENAI_BASE_URL: llm.url,
    OPENAI_MAX_RETRIES: '2',
    OPENAI_TIMEOUT: '5s',
    REPLY_MODE: 'send',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(smtp.port),
    RECONCILE_INTERVAL: '1h',
    WORKER_CONCURRENCY: '4',
    REPLY_LIMIT_PER_HOUR: '1000',
    REPLY_LIMIT_PER_DAY: '1000',
    // Like the reply limits, the loop guard is off unless a test turns it on (trust-and-loops).
    LOOP_MAX_REPLIES: '1000',
    ...overrides,
  };
  // HARNESS_LOG=debug shows the agent's own log while debugging a test.
  const logLevel = process.env['HARNESS_LOG'];
  const logger = logLevel === 'debug' || logLevel === 'info' ? createLogger('harness', { level: logLevel }) : silentLogger;
  const runtime = await openRuntime(loadConfig(env), logger, { longRunning: true });
  started.push(() => runtime.close());
  started.push(() => deleteRedisPrefix(prefix).then(() => undefined));
  const harness: AgentHarness = {
    runtime,
    llm,
    smtp,
    env,
    prefix,
    workers: null,
    startWorkers: async () => {
      harness.workers ??= await startWorkers(runtime, { reconcileOnStart: false });
      return harness.workers;
    },
    ingest: (raw, ingestOptions = {}) =>
      ingestRawMessage(
        runtime.ingestDeps({ logger: silentLogger, ...(ingestOptions.enqueue === false ? { pipeline: null } : {}) }),
        Buffer.from(raw),
        { kind: 'api' },
      ),
    close: async () => {
      await harness.workers?.close();
      await runtime.close();
      await llm.close();
      await smtp.close();
      await deleteRedisPrefix(prefix);
      await database.drop();
    },
  };
  if (options.workers !== false) await harness.startWorkers();
  return harness;
}

export async function deleteRedisPrefix(prefix: string): Promise<number> {
  const redis = new Redis(REDIS_URL);
  try {
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** Polls a condition until it holds or the deadline passes; returns the last value. */
export async function waitFor<T>(
  probe: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last value: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let counter = 0;

/** A customer email as raw RFC 5322 text. */
export function customerEmail(fields: {
  from?: string;
  to?: string;
  cc?: string;
  replyTo?: string;
  subject?: string;
  body: string;
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  date?: Date;
  headers?: Record<string, string>;
}): string {
  counter++;
  const lines = [
    `From: ${fields.from ?? 'Alice Okafor <alice@example.com>'}`,
    `To: ${fields.to ?? 'support@acme.example'}`,
    ...(fields.cc ? [`Cc: ${fields.cc}`] : []),
    ...(fields.replyTo ? [`Reply-To: ${fields.replyTo}`] : []),
    `Subject: ${fields.subject ?? 'Invoice question'}`,
    `Date: ${(fields.date ?? new Date()).toUTCString()}`,
    `Message-ID: ${fields.messageId ?? `<test-${Date.now()}-${counter}-${randomBytes(3).toString('hex')}@example.com>`}`,
    ...(fields.inReplyTo ? [`In-Reply-To: ${fields.inReplyTo}`] : []),
    ...(fields.references ? [`References: ${fields.references}`] : []),
    ...Object.entries(fields.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    fields.body,
    '',
  ];
  return lines.join('\r\n');
}

/** A valid `message_turn` answer for the scripted LLM. */
export function turnAnswer(
  overrides: Partial<{
    body: string;
    needsHuman: boolean;
    summary: string;
    openItems: string[];
    currentIntent: string;
    tags: string[];
    resolved: boolean;
  }> = {},
) {
  return {
    reply: {
      body: overrides.body ?? 'Hello, thanks for writing. We are looking into it.\n\nAcme Support',
      needsHuman: overrides.needsHuman ?? false,
    },
    summary: overrides.summary ?? 'Customer asked about an invoice.',
    openItems: overrides.openItems ?? ['check the invoice'],
    currentIntent: overrides.currentIntent ?? 'billing_question',
    tags: overrides.tags ?? ['billing'],
    resolved: overrides.resolved ?? false,
  };
}
