/**
 * The composition root: builds every adapter from the configuration once, for the CLI commands
 * and the long-running processes. Nothing here decides anything; it only wires.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { IngestSettings } from '../ingest/ingest-message.ts';
import { createProvider } from '../llm/create-provider.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import type { PromotionPolicy } from '../memory/promotion-policy.ts';
import type { ImapLogin } from '../imap/imap-client.ts';
import { createImapDraftsFolder, type DraftsFolder } from '../outbound/imap-drafts.ts';
import { createImapSentFolder, type SentFolder } from '../outbound/imap-sent.ts';
import type { OutboxDeps } from '../outbound/outbox.ts';
import { createSmtpSender, type MailSender } from '../outbound/smtp-sender.ts';
import { JobQueues } from '../queue/jobs.ts';
import { createRedis } from '../queue/redis.ts';
import { openDatabase, type Database, type Db } from '../store/database.ts';
import { ensureMailbox, type MailboxRecord } from '../store/mailboxes.ts';
import { migrateIfNeeded } from '../store/migrator.ts';
import type { TurnDeps } from './handle-thread-turn.ts';
import { ingestSettings } from './ingest-settings.ts';
import { loadPolicyFile } from './policy-file.ts';
import type { PromotionDeps } from './promote-thread.ts';
import { turnSettings } from './turn-settings.ts';

export interface Runtime {
  config: Config;
  logger: Logger;
  database: Database;
  db: Db;
  mailbox: MailboxRecord;
  policy: PromotionPolicy;
  provider: LlmProvider;
  ingest: IngestSettings;
  /** Redis and the queues, opened on first use (replay and read-only commands never need them). */
  redis(): Redis;
  queues(): JobQueues;
  turnDeps(): TurnDeps;
  promotionDeps(): PromotionDeps;
  outboxDeps(): OutboxDeps;
  /** The mailbox's Sent folder, when IMAP is configured (settles sends whose outcome was lost). */
  sentFolder(): SentFolder | null;
  imapConfigured: boolean;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Long-running processes wait out a Redis restart; one-shot commands fail fast instead of hanging. */
  longRunning?: boolean;
}

export async function openRuntime(config: Config, logger: Logger, options: RuntimeOptions = {}): Promise<Runtime> {
  const policy = await loadPolicyFile(config.memory.policyFile);
  const database = await openDatabase(config);
  try {
    const applied = await migrateIfNeeded(database);
    if (applied.length > 0) logger.info('database migrated', { applied });
  } catch (error) {
    await database.close();
    throw error;
  }
  const db = database.prisma;
  const mailbox = await ensureMailbox(db, config.supportAddress, config.supportName);
  const ingest = await ingestSettings(config, db);
  const provider = createProvider(config.llm, logger);
  const imapConfigured = Boolean(config.imap.host && config.imap.user && config.imap.password);
  const imapLogin: ImapLogin | null = imapConfigured
    ? {
        host: config.imap.host!,
        port: config.imap.port,
        secure: config.imap.secure,
        rejectUnauthorized: config.imap.rejectUnauthorized,
        user: config.imap.user!,
        password: config.imap.password!,
      }
    : null;

  let redis: Redis | null = null;
  let queues: JobQueues | null = null;
  let sender: MailSender | null = null;
  let drafts: DraftsFolder | null = null;
  let sent: SentFolder | null = null;
  const now = () => new Date();

  const runtime: Runtime = {
    config,
    logger,
    database,
    db,
    mailbox,
    policy,
    provider,
    ingest,
    imapConfigured,
    redis: () => (redis ??= createRedis(config.redisUrl, { forWorker: options.longRunning ?? false })),
    queues: () => (queues ??= new JobQueues(runtime.redis(), config.queuePrefix)),
    turnDeps: () => ({ db, provider, settings: turnSettings(config, ingest.messageIdSecret), logger: logger.child('turn'), now }),
    promotionDeps: () => ({
      db,
      provider,
      policy,
      maxActiveFacts: config.memory.maxProfileFacts,
      quietAfterMs: config.memory.quietAfterMs,
      logger: logger.child('promotion'),
      now,
    }),
    outboxDeps: () => {
      if (config.smtp.host && !sender) {
        sender = createSmtpSender({ ...config.smtp, host: config.smtp.host });
      }
      if (imapLogin && !drafts) drafts = createImapDraftsFolder(imapLogin);
      return {
        db,
        supportAddress: config.supportAddress,
        supportName: config.supportName,
        logger: logger.child('outbox'),
        ...(sender ? { sender } : {}),
        ...(drafts ? { drafts } : {}),
      };
    },
    sentFolder: () => (imapLogin ? (sent ??= createImapSentFolder(imapLogin)) : null),
    close: async () => {
      await queues?.close().catch(() => {});
      sender?.close();
      if (redis) await redis.quit().catch(() => redis?.disconnect());
      await database.close();
    },
  };
  return runtime;
}
