/**
 * The composition root: builds every adapter from the configuration once, for the CLI commands,
 * the long-running processes and replay. Nothing here decides anything; it only wires.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { IngestDeps, IngestSettings } from '../ingest/ingest-message.ts';
import { createProvider } from '../llm/create-provider.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import type { PromotionPolicy } from '../memory/promotion-policy.ts';
import type { PromotionCadence } from '../memory/promotion-schedule.ts';
import type { ImapLogin } from '../imap/imap-client.ts';
import { createImapDraftsFolder, type DraftsFolder } from '../outbound/imap-drafts.ts';
import { createImapSentFolder, type SentFolder } from '../outbound/imap-sent.ts';
import type { OutboxDeps } from '../outbound/outbox.ts';
import { createSmtpSender, type MailSender } from '../outbound/smtp-sender.ts';
import { createAccessTokenSource } from '../net/oauth2-tokens.ts';
import { JobQueues } from '../queue/jobs.ts';
import { createRedis } from '../queue/redis.ts';
import { openDatabase, type Database, type Db } from '../store/database.ts';
import { ensureMailbox, type MailboxRecord } from '../store/mailboxes.ts';
import { migrateIfNeeded } from '../store/migrator.ts';
import { bullmqScheduler } from './bullmq-scheduler.ts';
import type { TurnDeps } from './handle-thread-turn.ts';
import { OpenAiEmbedder, type Embedder } from '../llm/embeddings.ts';
import { InProcessVectorIndex, KnowledgeSearch } from './knowledge-search.ts';
import type { KbImportOptions } from './import-knowledge.ts';
import { DEFAULT_PDF_LIMITS } from '../knowledge/pdf-text.ts';
import { ingestSettings } from './ingest-settings.ts';
import { createPipeline, type Pipeline, type Scheduler } from './pipeline.ts';
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
  /** The runtime's clock: real time, or a replay's virtual clock. */
  now: () => Date;
  /** Redis and the queues, opened on first use (replay and read-only commands never need them). */
  redis(): Redis;
  queues(): JobQueues;
  turnDeps(): TurnDeps;
  /** Passage and question vectors (OPENAI_EMBEDDING_MODEL); null when not configured. */
  embedder: Embedder | null;
  /** Knowledge retrieval: lexical, fused with the ranking by meaning when embeddings are configured. */
  knowledge: KnowledgeSearch;
  /** What every knowledge import uses from the configuration: size caps, PDF limits, embeddings. */
  kbImportOptions(): KbImportOptions;
  promotionDeps(): PromotionDeps;
  outboxDeps(): OutboxDeps;
  /**
   * Ingestion wired to the pipeline: a stored customer message makes its turn due. Without
   * `pipeline` nothing is scheduled (mail is stored and waits for the reconciler).
   */
  ingestDeps(options?: { pipeline?: Pipeline | null; logger?: Logger }): IngestDeps;
  /** The pipeline's transitions on a scheduler: BullMQ by default (the workers), or the one given. */
  pipeline(scheduler?: Scheduler): Pipeline;
  /** The mailbox's Sent folder, when IMAP is configured (settles sends whose outcome was lost). */
  sentFolder(): SentFolder | null;
  imapConfigured: boolean;
  /** The mailbox login (password or OAuth2 tokens) when IMAP is configured. */
  imapLogin: ImapLogin | null;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Long-running processes wait out a Redis restart; one-shot commands fail fast instead of hanging. */
  longRunning?: boolean;
  /** Use this database (already open; migrated here if needed) instead of the configured one; closed with the runtime. */
  database?: Database;
  /** The support mailbox's address, when it is not SUPPORT_ADDRESS (replay's --address). */
  supportAddress?: string;
  /** A virtual clock (replay); real time by default. */
  now?: () => Date;
  /** The model to use instead of the configured one (replay wraps it). */
  provider?: LlmProvider;
  /** No IMAP or SMTP, whatever the configuration says (replay touches no mailbox). */
  offline?: boolean;
}

export async function openRuntime(config: Config, logger: Logger, options: RuntimeOptions = {}): Promise<Runtime> {
  const policy = await loadPolicyFile(config.memory.policyFile);
  const database = options.database ?? (await openDatabase(config));
  try {
    const applied = await migrateIfNeeded(database);
    if (applied.length > 0) logger.info('database migrated', { applied });
  } catch (error) {
    await database.close();
    throw error;
  }
  const db = database.prisma;
  const supportAddress = options.supportAddress ?? config.supportAddress;
  const mailbox = await ensureMailbox(db, supportAddress, config.supportName);
  const ingest = await ingestSettings(config, db, supportAddress);
  const provider = options.provider ?? createProvider(config.llm, logger);
  const offline = options.offline ?? false;
  // One token source for IMAP and SMTP: a refresh serves both, and a rotated refresh token is kept once.
  const oauth2 = config.oauth2 ? createAccessTokenSource(config.oauth2) : null;
  const imapConfigured = !offline && Boolean(config.imap.host && config.imap.user && (oauth2 || config.imap.password));
  const imapLogin: ImapLogin | null = imapConfigured
    ? {
        host: config.imap.host!,
        port: config.imap.port,
        secure: config.imap.secure,
        rejectUnauthorized: config.imap.rejectUnauthorized,
        user: config.imap.user!,
        ...(oauth2 ? { oauth2 } : { password: config.imap.password! }),
      }
    : null;

  let redis: Redis | null = null;
  let queues: JobQueues | null = null;
  let sender: MailSender | null = null;
  let drafts: DraftsFolder | null = null;
  let sent: SentFolder | null = null;
  let defaultPipeline: Pipeline | null = null;
  const now = options.now ?? (() => new Date());
  const embeddings = config.knowledge.embeddings;
  const embedder = embeddings ? new OpenAiEmbedder(embeddings, logger.child('embeddings')) : null;
  const knowledge = new KnowledgeSearch(
    database.sql,
    embedder ? { embedder, index: new InProcessVectorIndex(database.sql) } : null,
    logger.child('knowledge'),
  );

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
    imapLogin,
    now,
    embedder,
    knowledge,
    kbImportOptions: () => ({
      maxFileBytes: config.knowledge.maxFileBytes,
      pdf: { ...DEFAULT_PDF_LIMITS, timeoutMs: config.knowledge.pdfTimeoutMs },
      ...(embedder && embeddings
        ? { embeddings: { embedder, batch: embeddings.batch, logger: logger.child('embeddings'), sql: database.sql } }
        : {}),
    }),
    redis: () => (redis ??= createRedis(config.redisUrl, { forWorker: options.longRunning ?? false })),
    queues: () => (queues ??= new JobQueues(runtime.redis(), config.queuePrefix)),
    turnDeps: () => ({
      db,
      sql: database.sql,
      mailboxId: mailbox.id,
      provider,
      settings: turnSettings(config, ingest.messageIdSecret, supportAddress, policy.tags.vocabulary),
      logger: logger.child('turn'),
      now,
      knowledge,
    }),
    promotionDeps: () => ({
      db,
      provider,
      policy,
      maxActiveFacts: config.memory.maxProfileFacts,
      cadence: promotionCadence(config),
      passTokens: config.memory.promotionPassTokens,
      logger: logger.child('promotion'),
      now,
    }),
    outboxDeps: () => {
      if (!offline && config.smtp.host && !sender)
        sender = createSmtpSender({
          ...config.smtp,
          host: config.smtp.host,
          // XOAUTH2 logs in as SMTP_USER, or as the IMAP user when the mailbox is the same account.
          ...(oauth2 ? { oauth2, user: config.smtp.user ?? config.imap.user } : {}),
        });
      if (imapLogin && !drafts) drafts = createImapDraftsFolder(imapLogin);
      return {
        db,
        supportAddress,
        supportName: config.supportName,
        reply: { signature: config.reply.signature, quoteOriginal: config.reply.quoteOriginal },
        logger: logger.child('outbox'),
        ...(sender ? { sender } : {}),
        ...(drafts ? { drafts } : {}),
      };
    },
    ingestDeps: (ingestOptions = {}) => {
      const pipeline = ingestOptions.pipeline === undefined ? runtime.pipeline() : ingestOptions.pipeline;
      return {
        sql: database.sql,
        mailbox,
        settings: ingest,
        logger: ingestOptions.logger ?? logger.child('ingest'),
        ...(pipeline
          ? {
              onReplyNeeded: (_threadId: string, result: Parameters<Pipeline['messageStored']>[0]) => pipeline.messageStored(result),
              onDraftsSettled: (draftIds: string[]) => pipeline.draftsSettled(draftIds),
            }
          : {}),
      };
    },
    pipeline: (scheduler) => {
      const build = (s: Scheduler) =>
        createPipeline({
          db,
          mailboxId: mailbox.id,
          turns: runtime.turnDeps(),
          promotions: runtime.promotionDeps(),
          outbox: () => runtime.outboxDeps(),
          scheduler: s,
          appendsDrafts: imapConfigured,
          sentFolder: () => runtime.sentFolder(),
          cadence: promotionCadence(config),
          sendUnknownAfterMs: config.trust.sendUnknownAfterMs,
          logger: logger.child('pipeline'),
          now,
        });
      if (scheduler) return build(scheduler);
      return (defaultPipeline ??= build(bullmqScheduler(() => runtime.queues(), now)));
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

/** When promotion passes are due (src/memory/promotion-schedule.ts), from the configuration. */
function promotionCadence(config: Config): PromotionCadence {
  return {
    quietAfterMs: config.memory.quietAfterMs,
    everyMs: config.memory.promoteEveryMs,
    everyMessages: config.memory.promoteEveryMessages,
  };
}
