/**
 * The composition root: builds every adapter from the configuration once, for the CLI commands,
 * the long-running processes and replay. Nothing here decides anything; it only wires.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import type { IngestDeps, IngestSettings } from '../ingest/ingest-message.ts';
import { sharedParsePool } from '../ingest/parse-pool.ts';
import { loadTurnImages } from '../ingest/turn-images.ts';
import { createProvider } from '../llm/create-provider.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Logger } from '../logger.ts';
import type { MailboxSettings } from '../mailboxes-file.ts';
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
import { routePipelines } from './mailbox-routing.ts';
import { loadPolicyFile } from './policy-file.ts';
import type { PromotionDeps } from './promote-thread.ts';
import { turnSettings } from './turn-settings.ts';

/** One served mailbox: its row, its settings and the adapters that act for it. */
export interface MailboxRuntime {
  settings: MailboxSettings;
  mailbox: MailboxRecord;
  ingest: IngestSettings;
  /** The mailbox login (password or OAuth2 tokens) when IMAP is configured. */
  imapLogin: ImapLogin | null;
  turnDeps(): TurnDeps;
  /** SMTP and the Drafts folder of this mailbox, with its address, name and signature. */
  outboxDeps(): OutboxDeps;
  /** Ingestion into this mailbox; see `Runtime.ingestDeps`. */
  ingestDeps(options?: { pipeline?: Pipeline | null; logger?: Logger }): IngestDeps;
  /** This mailbox's Sent folder, when IMAP is configured. */
  sentFolder(): SentFolder | null;
}

export interface Runtime {
  config: Config;
  logger: Logger;
  database: Database;
  db: Db;
  /** The primary mailbox (the first one served). */
  mailbox: MailboxRecord;
  /** Every mailbox served, the primary first. */
  mailboxes: MailboxRuntime[];
  policy: PromotionPolicy;
  provider: LlmProvider;
  ingest: IngestSettings;
  /** The runtime's clock: real time, or a replay's virtual clock. */
  now: () => Date;
  /** Redis and the queues, opened on first use (replay and read-only commands never need them). */
  redis(): Redis;
  queues(): JobQueues;
  /** The primary mailbox's turn dependencies. */
  turnDeps(): TurnDeps;
  /** Passage and question vectors (OPENAI_EMBEDDING_MODEL); null when not configured. */
  embedder: Embedder | null;
  /** Knowledge retrieval: lexical, fused with the ranking by meaning when embeddings are configured. */
  knowledge: KnowledgeSearch;
  /** What every knowledge import uses from the configuration: size caps, PDF limits, embeddings. */
  kbImportOptions(): KbImportOptions;
  promotionDeps(): PromotionDeps;
  /** The primary mailbox's outbox. */
  outboxDeps(): OutboxDeps;
  /**
   * Ingestion into the primary mailbox wired to the pipeline: a stored customer message makes its
   * turn due. Without `pipeline` nothing is scheduled (mail is stored and waits for the reconciler).
   */
  ingestDeps(options?: { pipeline?: Pipeline | null; logger?: Logger }): IngestDeps;
  /**
   * The pipeline's transitions on a scheduler: BullMQ by default (the workers), or the one given.
   * With several mailboxes each thread's and draft's work goes to its own mailbox's settings.
   */
  pipeline(scheduler?: Scheduler): Pipeline;
  /** The primary mailbox's Sent folder, when IMAP is configured (settles sends whose outcome was lost). */
  sentFolder(): SentFolder | null;
  /** The primary mailbox has IMAP configured. */
  imapConfigured: boolean;
  /** The primary mailbox's login (password or OAuth2 tokens) when IMAP is configured. */
  imapLogin: ImapLogin | null;
  close(): Promise<void>;
}

export interface RuntimeOptions {
  /** Long-running processes wait out a Redis restart; one-shot commands fail fast instead of hanging. */
  longRunning?: boolean;
  /** Use this database (already open; migrated here if needed) instead of the configured one; closed with the runtime. */
  database?: Database;
  /** The support mailbox's address, when it is not SUPPORT_ADDRESS (replay's --address): that one mailbox only. */
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
  const provider = options.provider ?? createProvider(config.llm, logger);
  const offline = options.offline ?? false;
  const now = options.now ?? (() => new Date());
  const served = options.supportAddress ? [{ ...config.mailboxes[0]!, address: options.supportAddress }] : config.mailboxes;

  let redis: Redis | null = null;
  let queues: JobQueues | null = null;
  let defaultPipeline: Pipeline | null = null;
  const embeddings = config.knowledge.embeddings;
  const embedder = embeddings ? new OpenAiEmbedder(embeddings, logger.child('embeddings')) : null;
  const knowledge = new KnowledgeSearch(
    database.sql,
    embedder ? { embedder, index: new InProcessVectorIndex(database.sql) } : null,
    logger.child('knowledge'),
  );
  const closers: Array<() => void> = [];
  // Images go to the model only when it is the OpenAI-compatible one and OPENAI_VISION is on.
  const visionSettings = provider.name === 'openai' ? config.llm.vision : null;
  const vision = visionSettings
    ? (messages: ReadonlyArray<{ id: string }>) =>
        loadTurnImages(db, sharedParsePool(config.mail.parsing, logger), messages, visionSettings, logger.child('vision'))
    : null;

  const promotionDeps = (): PromotionDeps => ({
    db,
    provider,
    policy,
    maxActiveFacts: config.memory.maxProfileFacts,
    cadence: promotionCadence(config),
    passTokens: config.memory.promotionPassTokens,
    logger: logger.child('promotion'),
    now,
  });

  const openMailbox = async (settings: MailboxSettings): Promise<MailboxRuntime> => {
    const mailbox = await ensureMailbox(db, settings.address, settings.name);
    const base = await ingestSettings(config, db, settings.address, settings.entityKey);
    // The other mailboxes are the team too: a person writing from billing@ to support@ is not a customer to answer.
    const others = served.map((m) => m.address).filter((address) => address !== settings.address);
    const ingest = others.length === 0 ? base : { ...base, staffAddresses: [...(base.staffAddresses ?? []), ...others] };
    // One token source for IMAP and SMTP: a refresh serves both, and a rotated refresh token is kept once.
    const oauth2 = settings.oauth2 ? createAccessTokenSource(settings.oauth2) : null;
    const { imap, smtp } = settings;
    const imapLogin: ImapLogin | null =
      !offline && imap.host && imap.user && (oauth2 || imap.password)
        ? {
            host: imap.host,
            port: imap.port,
            secure: imap.secure,
            rejectUnauthorized: imap.rejectUnauthorized,
            user: imap.user,
            ...(oauth2 ? { oauth2 } : { password: imap.password! }),
          }
        : null;
    let sender: MailSender | null = null;
    let drafts: DraftsFolder | null = null;
    let sent: SentFolder | null = null;
    closers.push(() => sender?.close());
    const mailboxLogger = served.length > 1 ? logger.child(settings.address) : logger;
    const mailboxRuntime: MailboxRuntime = {
      settings,
      mailbox,
      ingest,
      imapLogin,
      turnDeps: () => ({
        db,
        sql: database.sql,
        mailboxId: mailbox.id,
        provider,
        settings: {
          ...turnSettings(config, ingest.messageIdSecret, settings.address, policy.tags.vocabulary, settings),
          // The other served mailboxes are the team too: never copied on a reply.
          staffAddresses: ingest.staffAddresses ?? config.staffAddresses,
        },
        logger: mailboxLogger.child('turn'),
        now,
        knowledge,
        ...(vision ? { images: vision } : {}),
      }),
      outboxDeps: () => {
        if (!offline && smtp.host && !sender)
          sender = createSmtpSender({ ...smtp, host: smtp.host, ...(oauth2 ? { oauth2, user: smtp.user ?? imap.user } : {}) });
        if (imapLogin && !drafts) drafts = createImapDraftsFolder(imapLogin, imap.draftsFolder);
        return {
          db,
          supportAddress: settings.address,
          supportName: settings.name,
          reply: { signature: settings.signature, quoteOriginal: config.reply.quoteOriginal },
          logger: mailboxLogger.child('outbox'),
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
          logger: ingestOptions.logger ?? mailboxLogger.child('ingest'),
          ...(pipeline
            ? {
                onReplyNeeded: (_threadId: string, result: Parameters<Pipeline['messageStored']>[0]) => pipeline.messageStored(result),
                onDraftsSettled: (draftIds: string[]) => pipeline.draftsSettled(draftIds),
              }
            : {}),
        };
      },
      sentFolder: () => (imapLogin ? (sent ??= createImapSentFolder(imapLogin)) : null),
    };
    return mailboxRuntime;
  };

  const mailboxes: MailboxRuntime[] = [];
  for (const settings of served) mailboxes.push(await openMailbox(settings));
  const primary = mailboxes[0]!;

  const runtime: Runtime = {
    config,
    logger,
    database,
    db,
    mailbox: primary.mailbox,
    mailboxes,
    policy,
    provider,
    ingest: primary.ingest,
    imapConfigured: primary.imapLogin !== null,
    imapLogin: primary.imapLogin,
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
    turnDeps: () => primary.turnDeps(),
    promotionDeps,
    outboxDeps: () => primary.outboxDeps(),
    ingestDeps: (ingestOptions) => primary.ingestDeps(ingestOptions),
    pipeline: (scheduler) => {
      const build = (s: Scheduler) =>
        routePipelines(
          db,
          mailboxes.map((m) => ({
            mailboxId: m.mailbox.id,
            pipeline: createPipeline({
              db,
              mailboxId: m.mailbox.id,
              turns: m.turnDeps(),
              promotions: promotionDeps(),
              outbox: () => m.outboxDeps(),
              scheduler: s,
              appendsDrafts: m.imapLogin !== null,
              sentFolder: () => m.sentFolder(),
              cadence: promotionCadence(config),
              sendUnknownAfterMs: config.trust.sendUnknownAfterMs,
              logger: logger.child('pipeline'),
              now,
            }),
          })),
        );
      if (scheduler) return build(scheduler);
      return (defaultPipeline ??= build(bullmqScheduler(() => runtime.queues(), now)));
    },
    sentFolder: () => primary.sentFolder(),
    close: async () => {
      await queues?.close().catch(() => {});
      for (const close of closers) close();
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
