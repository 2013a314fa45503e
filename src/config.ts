/**
 * Every setting of the product, parsed once from the environment with zod.
 * This is the only module that reads `process.env`; everything else receives a typed `Config`.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseHost } from './net/host-names.ts';
import { isAddressOrCidr } from './net/trusted-proxies.ts';
import { parseDuration } from './duration.ts';
import { AppError } from './errors.ts';
import { mailboxOverlap } from './mailbox-overlap.ts';
import { loadMailboxesFile, type MailboxSettings } from './mailboxes-file.ts';

/** The promotion policy shipped in config/, found from this file rather than the working directory. */
const SHIPPED_POLICY_FILE = fileURLToPath(new URL('../config/promotion-policy.json', import.meta.url));

const booleanFlag = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');

const duration = z.string().transform((value, ctx) => {
  const ms = parseDuration(value);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: 'is not a duration like 30s, 15m, 72h or 14d' });
    return z.NEVER;
  }
  return ms;
});

const positiveInt = z.coerce.number().int().positive();
const port = z.coerce.number().int().min(1).max(65535);
const emailAddress = z.string().trim().toLowerCase().pipe(z.email());
const optionalSecret = z.string().min(1).optional();
const commaList = z.string().transform((v) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

/** `https://support.example.com` (an origin: scheme, host, port; no path, query, fragment or credentials). */
const publicUrl = z.url().transform((value, ctx) => {
  const url = new URL(value);
  if (
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.username ||
    url.password ||
    url.pathname !== '/' ||
    url.search ||
    url.hash
  ) {
    ctx.addIssue({ code: 'custom', message: 'must be an origin like https://support.example.com (no path, query or credentials)' });
    return z.NEVER;
  }
  return url.origin;
});

const addressList = commaList.pipe(
  z.array(z.string().refine(isAddressOrCidr, 'entries must be IP addresses or CIDR blocks like 10.0.0.0/8')),
);
/** Host names as a Host header carries them, without a port: `support.example.com`, `10.0.0.5`, `[fd00::5]`. */
const hostList = commaList.pipe(
  z.array(z.string().refine((h) => parseHost(h)?.port === null, 'entries must be host names without scheme or port')),
);

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1000,
  mb: 1000 ** 2,
  gb: 1000 ** 3,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
};
/** A size in bytes: "52428800", "40MiB", "25 MB" (decimal units), "512KiB". */
const byteSize = z.string().transform((value, ctx) => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(value);
  const bytes = match ? Math.floor(Number(match[1]) * (BYTE_UNITS[(match[2] ?? '').toLowerCase()] ?? Number.NaN)) : Number.NaN;
  if (!Number.isSafeInteger(bytes) || bytes <= 0) {
    ctx.addIssue({ code: 'custom', message: 'is not a size like 40MiB, 25MB or 1048576' });
    return z.NEVER;
  }
  return bytes;
});

const envSchema = z.object({
  // storage
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgresql:// URL')
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .default('redis://127.0.0.1:6379'),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default('support-agent'),

  // the mailbox the agent serves
  SUPPORT_ADDRESS: emailAddress.default('support@example.com'),
  SUPPORT_NAME: z.string().default('Support'),

  /** Several mailboxes (JSON or YAML, src/mailboxes-file.ts); without it the variables below describe the one mailbox. */
  MAILBOXES_FILE: z.string().optional(),
  /** The single mailbox's fallback reply language; in the mailboxes file, `language`. */
  REPLY_LANGUAGE: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag like en, de or pt-BR')
    .optional(),

  // IMAP (the poller and the Drafts folder)
  IMAP_HOST: z.string().optional(),
  IMAP_PORT: port.default(993),
  IMAP_SECURE: booleanFlag.default(true),
  IMAP_TLS_REJECT_UNAUTHORIZED: booleanFlag.default(true),
  IMAP_USER: z.string().optional(),
  IMAP_PASSWORD: optionalSecret,
  IMAP_FOLDERS: commaList.default(['INBOX']),
  IMAP_POLL_INTERVAL: duration.default(60_000),
  IMAP_PROCESSED_ACTION: z.enum(['none', 'flag', 'move']).default('none'),
  IMAP_PROCESSED_FOLDER: z.string().default('Processed'),
  IMAP_IDLE: booleanFlag.default(true),
  /** The folder where the team's sent mail is filed: `auto` finds it by its \\Sent special-use flag, `none` reads none. */
  IMAP_SENT_FOLDER: z.string().default('auto'),
  /** The team's own addresses: their mail in the inbox is stored as the team's reply, never answered. */
  STAFF_ADDRESSES: commaList.pipe(z.array(emailAddress)).default([]),

  // SMTP (REPLY_MODE=send)
  SMTP_HOST: z.string().optional(),
  SMTP_PORT: port.default(587),
  SMTP_SECURE: booleanFlag.default(false),
  SMTP_TLS_REJECT_UNAUTHORIZED: booleanFlag.default(true),
  SMTP_USER: z.string().optional(),
  SMTP_PASSWORD: optionalSecret,
  /** password (IMAP_PASSWORD, SMTP_PASSWORD) or oauth2 (XOAUTH2 for IMAP and SMTP, from OAUTH2_REFRESH_TOKEN). */
  MAIL_AUTH: z.enum(['password', 'oauth2']).default('password'),
  /** Fills in OAUTH2_TOKEN_URL for google or microsoft (Microsoft 365 with the common tenant). */
  OAUTH2_PROVIDER: z.enum(['google', 'microsoft', 'custom']).default('custom'),
  OAUTH2_TOKEN_URL: z.url({ protocol: /^https?$/ }).optional(),
  OAUTH2_CLIENT_ID: z.string().optional(),
  OAUTH2_CLIENT_SECRET: optionalSecret,
  OAUTH2_REFRESH_TOKEN: optionalSecret,
  OAUTH2_SCOPE: z.string().optional(),
  REPLY_MODE: z.enum(['draft', 'send']).default('draft'),
  REPLY_MAX_AGE: duration.default(7 * 86_400_000),
  /** Plain text after "-- " in both parts of every reply; `\n` in the value is a line break (the single mailbox's; in the mailboxes file, `signature`). */
  REPLY_SIGNATURE: z
    .string()
    .transform((v) => v.replace(/\\n/g, '\n').trim())
    .pipe(z.string().max(2000, 'at most 2000 characters'))
    .default(''),
  /** The answered message quoted below the reply ("On …, … wrote:" and "> " lines). */
  REPLY_QUOTE_ORIGINAL: booleanFlag.default(true),
  /** Who stays in Cc: true (the rules in docs/replies.md "Who a reply goes to"), customer (only the customer's own addresses), false (nobody). */
  REPLY_KEEP_CC: z
    .enum(['true', 'false', '1', '0', 'yes', 'no', 'customer'])
    .transform((v): 'all' | 'customer' | 'none' => (v === 'customer' ? 'customer' : ['true', '1', 'yes'].includes(v) ? 'all' : 'none'))
    .default('all'),
  REPLY_CC_MAX: z.coerce.number().int().min(1).max(50).default(10),

  // LLM
  LLM_PROVIDER: z.enum(['auto', 'openai', 'offline']).default('auto'),
  OPENAI_API_KEY: optionalSecret,
  OPENAI_BASE_URL: z.url().optional(),
  OPENAI_MODEL: z.string().default('gpt-4o-mini'),
  OPENAI_TIMEOUT: duration.default(60_000),
  OPENAI_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  OPENAI_VISION: booleanFlag.default(false),
  OPENAI_VISION_MAX_IMAGES: z.coerce.number().int().min(1).max(10).default(3),
  OPENAI_VISION_MAX_BYTES: byteSize.default(2 * 1024 * 1024),

  // memory
  PROMPT_TOKEN_BUDGET: positiveInt.default(4500),
  SUMMARY_TOKEN_CAP: positiveInt.default(250),
  MESSAGE_TOKEN_CAP: positiveInt.default(1200),
  BUFFER_TOKEN_CAP: z.coerce.number().int().min(0).default(500),
  QUIET_AFTER: duration.default(72 * 3_600_000),
  PROMOTE_EVERY: duration.default(24 * 3_600_000),
  PROMOTE_EVERY_MESSAGES: positiveInt.default(10),
  PROMOTION_PASS_TOKENS: positiveInt.default(6000),
  THREAD_SUBJECT_WINDOW: duration.default(14 * 86_400_000),
  PROMOTION_POLICY_FILE: z.string().optional(),
  MAX_PROFILE_FACTS: positiveInt.default(40),

  // knowledge base
  KB_TOKEN_CAP: z.coerce.number().int().min(0).default(700),
  KB_PASSAGES: z.coerce.number().int().min(0).max(20).default(4),
  KB_MAX_FILE_BYTES: byteSize.default(20 * 1024 * 1024),
  KB_PDF_TIMEOUT: duration.default(20_000),
  OPENAI_EMBEDDING_MODEL: z.string().trim().min(1).max(200).optional(),
  KB_EMBEDDING_BATCH: z.coerce.number().int().min(1).max(2048).default(64),
  KB_EMBEDDING_INPUT_TOKENS: z.coerce.number().int().min(16).max(8000).default(2000),
  KB_EMBEDDING_TIMEOUT: duration.default(15_000),
  CONSOLE_UPLOAD_MAX_BYTES: byteSize.default(5 * 1024 * 1024),

  // reading mail
  MAX_MESSAGE_BYTES: byteSize.default(40 * 1024 * 1024),
  PARSE_WORKERS: z.coerce.number().int().min(0).max(16).default(1),
  PARSE_TIMEOUT: duration.default(30_000),
  PARSE_WORKER_MEMORY: z.coerce.number().int().min(64).max(16_384).default(512),

  // attachments
  ATTACHMENT_MAX_FILES: z.coerce.number().int().min(0).max(20).default(5),
  ATTACHMENT_MAX_BYTES: byteSize.default(10 * 1024 * 1024),
  ATTACHMENT_TEXT_MAX_CHARS: z.coerce.number().int().min(0).max(200_000).default(20_000),
  ATTACHMENT_TIMEOUT: duration.default(15_000),
  ATTACHMENT_WORKER_MEMORY: z.coerce.number().int().min(64).max(4_096).default(256),
  ATTACHMENT_WORKERS: z.coerce.number().int().min(1).max(16).default(2),
  ATTACHMENT_MAX_PDF_PAGES: positiveInt.default(50),
  ATTACHMENT_TOKEN_CAP: z.coerce.number().int().min(0).default(400),

  // entity resolution
  ENTITY_KEY: z.enum(['address', 'domain']).default('address'),
  FOLD_PLUS_ADDRESSES: booleanFlag.default(false),
  FREE_MAIL_DOMAINS: commaList.default([]),

  // trust and safety
  TRUSTED_AUTHSERV_ID: z.string().trim().toLowerCase().optional(),
  MESSAGE_ID_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  REPLY_LIMIT_PER_HOUR: positiveInt.default(5),
  REPLY_LIMIT_PER_DAY: positiveInt.default(20),
  LOOP_MAX_REPLIES: positiveInt.default(3),
  LOOP_WINDOW: duration.default(7 * 86_400_000),
  SEND_UNKNOWN_AFTER: duration.default(10 * 60_000),

  // workers
  WORKER_CONCURRENCY: positiveInt.default(4),
  RECONCILE_INTERVAL: duration.default(60_000),
  WORKER_LOCK_DURATION: duration.default(30_000),

  // console
  CONSOLE_HOST: z.string().default('127.0.0.1'),
  CONSOLE_PORT: port.default(3000),
  CONSOLE_PASSWORD: optionalSecret,
  CONSOLE_PUBLIC_URL: publicUrl.optional(),
  CONSOLE_TRUSTED_PROXIES: addressList.default([]),
  CONSOLE_ALLOWED_HOSTS: hostList.default([]),

  LOG_LEVEL: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
});

/** Every setting's variable name, in the schema's order (docs/configuration.md lists each once: test/unit/configuration-doc.test.ts). */
export const SETTING_NAMES: readonly string[] = Object.keys(envSchema.shape);

/**
 * The grouped settings the product uses, built from the validated variables. `Config` is this
 * function's result type: each setting is declared once in `envSchema` and placed once here.
 */
function grouped(e: z.output<typeof envSchema>) {
  return {
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    /** PostgreSQL connections per process; by default enough for every concurrent turn plus the poller and the console. */
    databasePoolSize: e.DATABASE_POOL_SIZE ?? Math.max(10, e.WORKER_CONCURRENCY + 4),
    redisUrl: e.REDIS_URL,
    queuePrefix: e.QUEUE_PREFIX,
    supportAddress: e.SUPPORT_ADDRESS,
    supportName: e.SUPPORT_NAME,
    imap: envImap(e),
    staffAddresses: e.STAFF_ADDRESSES,
    smtp: {
      host: e.SMTP_HOST,
      port: e.SMTP_PORT,
      secure: e.SMTP_SECURE,
      rejectUnauthorized: e.SMTP_TLS_REJECT_UNAUTHORIZED,
      user: e.SMTP_USER,
      password: e.SMTP_PASSWORD,
    },
    /** XOAUTH2 for IMAP and SMTP instead of passwords; null with MAIL_AUTH=password. */
    oauth2: envOAuth2(e),
    replyMode: e.REPLY_MODE,
    /** Mail older than this when ingested (a backlog, an initial sync) is stored and threaded but not answered. */
    replyMaxAgeMs: e.REPLY_MAX_AGE,
    /** How a reply looks and who it is copied to (docs/replies.md "Replies as a mail client sends them"). */
    reply: {
      signature: e.REPLY_SIGNATURE,
      quoteOriginal: e.REPLY_QUOTE_ORIGINAL,
      keepCc: e.REPLY_KEEP_CC,
      ccMax: e.REPLY_CC_MAX,
    },
    llm: {
      /**
       * `auto` resolved: the OpenAI-compatible provider when a key or a base URL is set (a local
       * server such as Ollama, vLLM or llama.cpp needs no key), else the offline one.
       */
      provider: (e.LLM_PROVIDER === 'auto' ? (e.OPENAI_API_KEY || e.OPENAI_BASE_URL ? 'openai' : 'offline') : e.LLM_PROVIDER) as
        'openai' | 'offline',
      apiKey: e.OPENAI_API_KEY,
      baseUrl: e.OPENAI_BASE_URL,
      model: e.OPENAI_MODEL,
      timeoutMs: e.OPENAI_TIMEOUT,
      maxRetries: e.OPENAI_MAX_RETRIES,
      /** The current turn's images passed to a vision-capable model (OPENAI_VISION); null: images are named only. */
      vision: e.OPENAI_VISION ? { maxImages: e.OPENAI_VISION_MAX_IMAGES, maxBytes: e.OPENAI_VISION_MAX_BYTES } : null,
    },
    memory: {
      promptTokenBudget: e.PROMPT_TOKEN_BUDGET,
      summaryTokenCap: e.SUMMARY_TOKEN_CAP,
      messageTokenCap: e.MESSAGE_TOKEN_CAP,
      /** The prompt's share for the thread's last exchanges (the rolling buffer); 0 turns it off. */
      bufferTokenCap: e.BUFFER_TOKEN_CAP,
      quietAfterMs: e.QUIET_AFTER,
      /** While a thread stays active, a pass when its oldest unseen customer message has waited this long... */
      promoteEveryMs: e.PROMOTE_EVERY,
      /** ...or when this many wait, whichever comes first. */
      promoteEveryMessages: e.PROMOTE_EVERY_MESSAGES,
      /** One pass shows the model at most this many tokens of customer messages; a backlog is split. */
      promotionPassTokens: e.PROMOTION_PASS_TOKENS,
      subjectWindowMs: e.THREAD_SUBJECT_WINDOW,
      // Unset: the policy shipped with the product, wherever the command is run from.
      policyFile: e.PROMOTION_POLICY_FILE ? path.resolve(e.PROMOTION_POLICY_FILE) : SHIPPED_POLICY_FILE,
      maxProfileFacts: e.MAX_PROFILE_FACTS,
    },
    /** The knowledge base: its share of the reply prompt, passages per turn, import bounds. */
    knowledge: {
      /** Tokens of the reply prompt given to knowledge passages (0 turns retrieval off). */
      tokenCap: e.KB_TOKEN_CAP,
      /** At most this many passages per turn, best first. */
      passages: e.KB_PASSAGES,
      maxFileBytes: e.KB_MAX_FILE_BYTES,
      pdfTimeoutMs: e.KB_PDF_TIMEOUT,
      /** Passage and question vectors from an OpenAI-compatible embeddings endpoint (OPENAI_BASE_URL, OPENAI_API_KEY); null: lexical only. */
      embeddings: e.OPENAI_EMBEDDING_MODEL
        ? {
            model: e.OPENAI_EMBEDDING_MODEL,
            apiKey: e.OPENAI_API_KEY,
            baseUrl: e.OPENAI_BASE_URL,
            /** Inputs per request. */
            batch: e.KB_EMBEDDING_BATCH,
            /** Each input is cut to this many tokens before it is sent. */
            inputTokens: e.KB_EMBEDDING_INPUT_TOKENS,
            timeoutMs: e.KB_EMBEDDING_TIMEOUT,
            maxRetries: e.OPENAI_MAX_RETRIES,
          }
        : null,
      /** The console's upload forms (knowledge files, fact imports) take at most this many bytes. */
      uploadMaxBytes: e.CONSOLE_UPLOAD_MAX_BYTES,
    },
    /** Reading mail: the size cap and the parse workers' number and per-message bounds. */
    mail: {
      maxMessageBytes: e.MAX_MESSAGE_BYTES,
      parsing: { workers: e.PARSE_WORKERS, timeoutMs: e.PARSE_TIMEOUT, memoryMb: e.PARSE_WORKER_MEMORY },
      /** Reading attachments' text at ingestion: files per message, caps, and each file's worker bounds. */
      attachments: {
        maxFiles: e.ATTACHMENT_MAX_FILES,
        maxBytes: e.ATTACHMENT_MAX_BYTES,
        textMaxChars: e.ATTACHMENT_TEXT_MAX_CHARS,
        timeoutMs: e.ATTACHMENT_TIMEOUT,
        memoryMb: e.ATTACHMENT_WORKER_MEMORY,
        workers: e.ATTACHMENT_WORKERS,
        maxPdfPages: e.ATTACHMENT_MAX_PDF_PAGES,
      },
      /** Tokens of the reply prompt given to the current turn's attachments (0 leaves them out). */
      attachmentTokenCap: e.ATTACHMENT_TOKEN_CAP,
    },
    entity: {
      key: e.ENTITY_KEY,
      foldPlusAddresses: e.FOLD_PLUS_ADDRESSES,
      extraFreeMailDomains: e.FREE_MAIL_DOMAINS.map((d) => d.toLowerCase()),
    },
    trust: {
      authservId: e.TRUSTED_AUTHSERV_ID,
      messageIdSecret: e.MESSAGE_ID_SECRET,
      replyLimitPerHour: e.REPLY_LIMIT_PER_HOUR,
      replyLimitPerDay: e.REPLY_LIMIT_PER_DAY,
      /** Replies in a row to one correspondent, domain or thread with no human-looking message in between. */
      loopMaxReplies: e.LOOP_MAX_REPLIES,
      /** A loop counter quiet for this long starts afresh. */
      loopWindowMs: e.LOOP_WINDOW,
      /** A send claimed this long ago with no recorded outcome is held for a person, never re-sent. */
      sendUnknownAfterMs: e.SEND_UNKNOWN_AFTER,
    },
    worker: {
      concurrency: e.WORKER_CONCURRENCY,
      reconcileIntervalMs: e.RECONCILE_INTERVAL,
      /** A job whose worker died is retried after about this long (stall detection). */
      lockDurationMs: e.WORKER_LOCK_DURATION,
    },
    console: {
      host: e.CONSOLE_HOST,
      port: e.CONSOLE_PORT,
      password: e.CONSOLE_PASSWORD,
      /** The console's external origin (behind a TLS proxy); decides Origin checks and Secure cookies. */
      publicUrl: e.CONSOLE_PUBLIC_URL,
      /** Addresses or CIDR blocks whose X-Forwarded-* / Forwarded headers are believed. */
      trustedProxies: e.CONSOLE_TRUSTED_PROXIES,
      /** Further host names the console answers to (besides loopback, its bound address and the public URL's). */
      allowedHosts: e.CONSOLE_ALLOWED_HOSTS,
    },
    logLevel: e.LOG_LEVEL,
    /** `auto`: human lines on a terminal, JSON otherwise (src/app/log-format.ts). */
    logFormat: e.LOG_FORMAT,
    mailboxesFile: e.MAILBOXES_FILE === undefined ? undefined : path.resolve(e.MAILBOXES_FILE),
    /** Every mailbox the agent serves, the first one primary; from MAILBOXES_FILE, else the one of the variables. */
    mailboxes: [envMailbox(e)],
  };
}

/** The OAUTH2_* variables; null with MAIL_AUTH=password. */
function envOAuth2(e: z.output<typeof envSchema>) {
  return e.MAIL_AUTH === 'oauth2'
    ? {
        tokenUrl: e.OAUTH2_TOKEN_URL ?? OAUTH2_TOKEN_URLS[e.OAUTH2_PROVIDER] ?? '',
        clientId: e.OAUTH2_CLIENT_ID ?? '',
        clientSecret: e.OAUTH2_CLIENT_SECRET,
        refreshToken: e.OAUTH2_REFRESH_TOKEN ?? '',
        scope: e.OAUTH2_SCOPE,
      }
    : null;
}

/** The IMAP_* variables. */
function envImap(e: z.output<typeof envSchema>) {
  return {
    host: e.IMAP_HOST,
    port: e.IMAP_PORT,
    secure: e.IMAP_SECURE,
    rejectUnauthorized: e.IMAP_TLS_REJECT_UNAUTHORIZED,
    user: e.IMAP_USER,
    password: e.IMAP_PASSWORD,
    folders: e.IMAP_FOLDERS,
    pollIntervalMs: e.IMAP_POLL_INTERVAL,
    processedAction: e.IMAP_PROCESSED_ACTION,
    processedFolder: e.IMAP_PROCESSED_FOLDER,
    idle: e.IMAP_IDLE,
    /** `auto` (by the \\Sent special-use flag), a folder path, or `none`. */
    sentFolder: e.IMAP_SENT_FOLDER,
  };
}

/** The mailbox the single-mailbox variables describe (and the defaults of the mailboxes file). */
function envMailbox(e: z.output<typeof envSchema>): MailboxSettings {
  return {
    address: e.SUPPORT_ADDRESS,
    name: e.SUPPORT_NAME,
    imap: { ...envImap(e), draftsFolder: 'auto' },
    smtp: {
      host: e.SMTP_HOST,
      port: e.SMTP_PORT,
      secure: e.SMTP_SECURE,
      rejectUnauthorized: e.SMTP_TLS_REJECT_UNAUTHORIZED,
      // XOAUTH2 logs in as SMTP_USER, or as the IMAP user when the mailbox is the same account.
      user: e.SMTP_USER ?? (e.MAIL_AUTH === 'oauth2' ? e.IMAP_USER : undefined),
      password: e.SMTP_PASSWORD,
    },
    oauth2: envOAuth2(e),
    replyMode: e.REPLY_MODE,
    signature: e.REPLY_SIGNATURE === '' ? undefined : e.REPLY_SIGNATURE,
    language: e.REPLY_LANGUAGE,
    entityKey: e.ENTITY_KEY,
  };
}

/** The token endpoints of the providers `support-agent auth` knows. */
export const OAUTH2_TOKEN_URLS: Partial<Record<'google' | 'microsoft' | 'custom', string>> = {
  google: 'https://oauth2.googleapis.com/token',
  microsoft: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
};

/** Rules that involve more than one variable; each names the variable to fix. */
function crossChecks(e: z.output<typeof envSchema>, ctx: z.RefinementCtx): void {
  if (e.LLM_PROVIDER === 'openai' && !e.OPENAI_API_KEY && !e.OPENAI_BASE_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['LLM_PROVIDER'],
      message: 'openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)',
    });
  }
  if (e.OPENAI_EMBEDDING_MODEL && !e.OPENAI_API_KEY && !e.OPENAI_BASE_URL) {
    ctx.addIssue({
      code: 'custom',
      path: ['OPENAI_EMBEDDING_MODEL'],
      message: 'embeddings need OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)',
    });
  }
  if (e.MAIL_AUTH === 'oauth2') {
    const missing = [
      ...(e.OAUTH2_CLIENT_ID ? [] : ['OAUTH2_CLIENT_ID']),
      ...(e.OAUTH2_REFRESH_TOKEN ? [] : ['OAUTH2_REFRESH_TOKEN']),
      ...(e.OAUTH2_TOKEN_URL || OAUTH2_TOKEN_URLS[e.OAUTH2_PROVIDER] ? [] : ['OAUTH2_TOKEN_URL']),
    ];
    for (const name of missing) ctx.addIssue({ code: 'custom', path: [name], message: 'required when MAIL_AUTH=oauth2' });
  }
  // With a mailboxes file, REPLY_MODE is only the default and each mailbox is checked there.
  if (e.REPLY_MODE === 'send' && !e.SMTP_HOST && !e.MAILBOXES_FILE) {
    ctx.addIssue({ code: 'custom', path: ['SMTP_HOST'], message: 'required when REPLY_MODE=send' });
  }
}

const configSchema = envSchema.superRefine(crossChecks).transform(grouped);

/** The product's validated settings, grouped by concern. */
export type Config = z.output<typeof configSchema>;

/**
 * Parses the environment. Throws `AppError('CONFIG_INVALID')` naming every bad variable
 * (never echoing its value, which may be a secret).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(
    Object.keys(envSchema.shape)
      .filter((key) => env[key] !== undefined && env[key] !== '')
      .map((key) => [key, env[key]]),
  );
  const parsed = configSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${String(issue.path[0])}: ${issue.message}`);
    throw new AppError('CONFIG_INVALID', `Invalid configuration: ${problems.join('; ')}`);
  }
  const config = parsed.data;
  if (config.mailboxesFile === undefined) {
    const m = config.mailboxes[0]!;
    const inboxIsSent = mailboxOverlap([
      {
        label: 'IMAP_FOLDERS',
        host: m.imap.host,
        port: m.imap.port,
        user: m.imap.user,
        inbox: m.imap.folders,
        sent: m.imap.sentFolder,
        drafts: 'auto',
      },
    ]);
    if (inboxIsSent) throw new AppError('CONFIG_INVALID', `Invalid configuration: ${inboxIsSent}`);
    return config;
  }
  const mailboxes = loadMailboxesFile(config.mailboxesFile, env, {
    mailbox: config.mailboxes[0]!,
    tokenUrls: OAUTH2_TOKEN_URLS,
    parseDuration,
  });
  // The first mailbox is the primary one: SUPPORT_ADDRESS and SUPPORT_NAME follow it.
  return { ...config, supportAddress: mailboxes[0]!.address, supportName: mailboxes[0]!.name, mailboxes };
}

/**
 * Only the OAuth2 app registration (OAUTH2_CLIENT_ID, OAUTH2_CLIENT_SECRET), for `support-agent auth`:
 * it runs before a refresh token exists, when the whole configuration may not validate yet.
 */
export function loadOAuth2Client(env: NodeJS.ProcessEnv = process.env): { clientId?: string; clientSecret?: string } {
  const schema = envSchema.pick({ OAUTH2_CLIENT_ID: true, OAUTH2_CLIENT_SECRET: true });
  const parsed = schema.safeParse({
    OAUTH2_CLIENT_ID: env['OAUTH2_CLIENT_ID'] || undefined,
    OAUTH2_CLIENT_SECRET: env['OAUTH2_CLIENT_SECRET'] || undefined,
  });
  if (!parsed.success) throw new AppError('CONFIG_INVALID', `Invalid configuration: ${String(parsed.error.issues[0]?.path[0])}`);
  return {
    ...(parsed.data.OAUTH2_CLIENT_ID ? { clientId: parsed.data.OAUTH2_CLIENT_ID } : {}),
    ...(parsed.data.OAUTH2_CLIENT_SECRET ? { clientSecret: parsed.data.OAUTH2_CLIENT_SECRET } : {}),
  };
}

/** Names of every variable the product reads, for `.env.example` checks and docs. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(envSchema.shape);
