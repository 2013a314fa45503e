/**
 * The mailboxes file (MAILBOXES_FILE): several mailboxes served by one agent, each with its own
 * address, name, IMAP/SMTP login, folders, reply mode, signature, language and entity-key mode.
 * JSON (`.json`) or YAML (anything else), parsed once here with zod; every problem is one line that
 * names the file, the mailbox and the key, never a value (which may be a secret). A syntax error
 * says where (line and column) and what kind it is, never the line itself: the parsers' own
 * messages quote the source ("…"password": hunter2}" is not valid JSON), so they are not used.
 *
 * Secrets (passwords, OAuth2 client secret and refresh token) are written inline or, better, as
 * `env:NAME`: the value of the environment variable NAME, resolved here from the environment the
 * configuration was loaded from.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { AppError } from './errors.ts';
import { mailboxOverlap } from './mailbox-overlap.ts';

/** One mailbox's settings, as the rest of the product uses them. */
export interface MailboxSettings {
  address: string;
  /** The display name in From and in the model's instructions. */
  name: string;
  imap: {
    host: string | undefined;
    port: number;
    secure: boolean;
    rejectUnauthorized: boolean;
    user: string | undefined;
    password: string | undefined;
    folders: string[];
    pollIntervalMs: number;
    processedAction: 'none' | 'flag' | 'move';
    processedFolder: string;
    idle: boolean;
    /** `auto` (by the \\Sent special-use flag), a folder path, or `none`. */
    sentFolder: string;
    /** `auto` (by the \\Drafts special-use flag) or a folder path. */
    draftsFolder: string;
  };
  smtp: {
    host: string | undefined;
    port: number;
    secure: boolean;
    rejectUnauthorized: boolean;
    user: string | undefined;
    password: string | undefined;
  };
  oauth2: MailboxOAuth2 | null;
  replyMode: 'draft' | 'send';
  /** Plain text put below every reply of this mailbox. */
  signature: string | undefined;
  /** The language to answer in when the customer's is unclear (BCP 47, e.g. `en`, `de`, `pt-BR`). */
  language: string | undefined;
  entityKey: 'address' | 'domain';
}

export interface MailboxOAuth2 {
  tokenUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  refreshToken: string;
  scope: string | undefined;
}

/** At most this many bytes are read: a mailboxes file is a few kilobytes. */
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_MAILBOXES = 100;

const port = z.number().int().min(1).max(65535);
const secret = z.string().min(1, 'must not be empty');
const folderName = z.string().trim().min(1, 'must not be empty').max(200);

const connectionFields = {
  host: z.string().trim().min(1, 'must not be empty'),
  port: port.optional(),
  secure: z.boolean().optional(),
  tlsRejectUnauthorized: z.boolean().optional(),
  user: z.string().trim().min(1, 'must not be empty').optional(),
  password: secret.optional(),
};

const oauth2Schema = z.strictObject({
  provider: z.enum(['google', 'microsoft', 'custom']).optional(),
  tokenUrl: z.url({ protocol: /^https?$/ }).optional(),
  clientId: z.string().min(1, 'must not be empty'),
  clientSecret: secret.optional(),
  refreshToken: secret,
  scope: z.string().optional(),
});

const mailboxSchema = z.strictObject({
  address: z.string().trim().toLowerCase().pipe(z.email('must be an email address')),
  name: z.string().trim().min(1, 'must not be empty').max(200).optional(),
  auth: z.enum(['password', 'oauth2']).optional(),
  oauth2: oauth2Schema.optional(),
  imap: z.strictObject({ ...connectionFields, pollInterval: z.string().optional(), idle: z.boolean().optional() }),
  smtp: z.strictObject(connectionFields).optional(),
  folders: z
    .strictObject({
      inbox: z.array(folderName).min(1, 'must list at least one folder').max(50).optional(),
      sent: folderName.optional(),
      drafts: folderName.optional(),
      processed: z.enum(['none', 'flag', 'move']).optional(),
      processedFolder: folderName.optional(),
    })
    .optional(),
  replyMode: z.enum(['draft', 'send']).optional(),
  signature: z.string().max(4000, 'must be at most 4000 characters').optional(),
  language: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag like en, de or pt-BR')
    .optional(),
  entityKey: z.enum(['address', 'domain']).optional(),
});

const fileSchema = z.strictObject({
  mailboxes: z.array(mailboxSchema).min(1, 'must list at least one mailbox').max(MAX_MAILBOXES),
});

type MailboxEntry = z.output<typeof mailboxSchema>;

/** What a mailbox takes from the environment when the file does not say. */
export interface MailboxDefaults {
  mailbox: MailboxSettings;
  /** The token endpoints of the providers `support-agent auth` knows. */
  tokenUrls: Partial<Record<'google' | 'microsoft' | 'custom', string>>;
  /** Parses a duration like `30s` (the poll interval); null when it is not one. */
  parseDuration: (value: string) => number | null;
}

/**
 * Reads and validates the mailboxes file. `env` resolves `env:NAME` secrets; `defaults` fills what
 * a mailbox leaves out (ports, TLS, poll interval, reply mode, entity key: the single-mailbox variables).
 */
export function loadMailboxesFile(file: string, env: NodeJS.ProcessEnv, defaults: MailboxDefaults): MailboxSettings[] {
  const where = `MAILBOXES_FILE (${path.basename(file)})`;
  const fail = (message: string): never => {
    throw new AppError('CONFIG_INVALID', `${where}: ${message}`);
  };
  let text: string;
  try {
    if (statSync(file).size > MAX_FILE_BYTES) fail(`larger than ${MAX_FILE_BYTES} bytes`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof AppError) throw error;
    return fail(`cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return parseMailboxes(text, { where, json: /\.json$/i.test(file), env, defaults });
}

/** The file's text to mailboxes (separate from reading it, for the tests). */
export function parseMailboxes(
  text: string,
  options: { where: string; json: boolean; env: NodeJS.ProcessEnv; defaults: MailboxDefaults },
): MailboxSettings[] {
  const { where, env, defaults } = options;
  const fail = (message: string): never => {
    throw new AppError('CONFIG_INVALID', `${where}: ${message}`);
  };
  const read = options.json ? readJson(text) : readYaml(text);
  if (!read.ok) return fail(read.problem);
  const data = read.data;
  const parsed = fileSchema.safeParse(data);
  if (!parsed.success) {
    // A misspelt key first: it usually explains the rest (`mailbox:` leaves `mailboxes` missing).
    const issue = parsed.error.issues.find((i) => i.code === 'unrecognized_keys') ?? parsed.error.issues[0]!;
    const missing = issue.code === 'invalid_type' && / received undefined$/.test(issue.message);
    return fail(`${describePath(issue.path, data)}: ${missing ? 'is required' : issue.message}`);
  }
  const seen = new Set<string>();
  const mailboxes = parsed.data.mailboxes.map((entry, index) => {
    const at = `mailboxes[${index}] (${entry.address})`;
    if (seen.has(entry.address)) fail(`${at}: the address is listed twice`);
    seen.add(entry.address);
    return toSettings(entry, { at, env, defaults, fail });
  });
  const overlap = mailboxOverlap(
    mailboxes.map((m, index) => ({
      label: `mailboxes[${index}] (${m.address})`,
      host: m.imap.host,
      port: m.imap.port,
      user: m.imap.user,
      inbox: m.imap.folders,
      sent: m.imap.sentFolder,
      drafts: m.imap.draftsFolder,
    })),
  );
  if (overlap) fail(overlap);
  return mailboxes;
}

function toSettings(
  entry: MailboxEntry,
  context: { at: string; env: NodeJS.ProcessEnv; defaults: MailboxDefaults; fail: (message: string) => never },
): MailboxSettings {
  const { at, env, fail } = context;
  const base = context.defaults.mailbox;
  const resolve = (value: string | undefined, key: string): string | undefined => {
    if (value === undefined || !value.startsWith('env:')) return value;
    const name = value.slice(4);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) fail(`${at}: ${key}: "env:" must be followed by a variable name`);
    const resolved = env[name];
    if (resolved === undefined || resolved === '') fail(`${at}: ${key}: the environment variable ${name} is not set`);
    return resolved;
  };
  const auth = entry.auth ?? (entry.oauth2 ? 'oauth2' : 'password');
  if (auth === 'password' && entry.oauth2) fail(`${at}: oauth2 is given but auth is password`);
  if (auth === 'password' && entry.imap.password === undefined) fail(`${at}: imap.password is required with auth: password`);
  if (auth === 'oauth2' && !entry.oauth2) fail(`${at}: oauth2 (clientId, refreshToken) is required with auth: oauth2`);
  const replyMode = entry.replyMode ?? base.replyMode;
  if (replyMode === 'send' && !entry.smtp) fail(`${at}: smtp is required with replyMode: send`);

  let oauth2: MailboxOAuth2 | null = null;
  if (auth === 'oauth2' && entry.oauth2) {
    const o = entry.oauth2;
    const tokenUrl = o.tokenUrl ?? context.defaults.tokenUrls[o.provider ?? 'custom'];
    if (!tokenUrl) fail(`${at}: oauth2.tokenUrl is required with provider custom`);
    oauth2 = {
      tokenUrl: tokenUrl!,
      clientId: o.clientId,
      clientSecret: resolve(o.clientSecret, 'oauth2.clientSecret'),
      refreshToken: resolve(o.refreshToken, 'oauth2.refreshToken')!,
      scope: o.scope,
    };
  }
  let pollIntervalMs = base.imap.pollIntervalMs;
  if (entry.imap.pollInterval !== undefined) {
    const ms = context.defaults.parseDuration(entry.imap.pollInterval);
    if (ms === null) fail(`${at}: imap.pollInterval: not a duration like 30s or 5m`);
    pollIntervalMs = ms!;
  }
  const folders = entry.folders ?? {};
  return {
    address: entry.address,
    name: entry.name ?? base.name,
    imap: {
      host: entry.imap.host,
      port: entry.imap.port ?? base.imap.port,
      secure: entry.imap.secure ?? base.imap.secure,
      rejectUnauthorized: entry.imap.tlsRejectUnauthorized ?? base.imap.rejectUnauthorized,
      // The address is the usual login.
      user: entry.imap.user ?? entry.address,
      password: auth === 'password' ? resolve(entry.imap.password, 'imap.password') : undefined,
      folders: folders.inbox ?? ['INBOX'],
      pollIntervalMs,
      processedAction: folders.processed ?? base.imap.processedAction,
      processedFolder: folders.processedFolder ?? base.imap.processedFolder,
      idle: entry.imap.idle ?? base.imap.idle,
      sentFolder: folders.sent ?? 'auto',
      draftsFolder: folders.drafts ?? 'auto',
    },
    smtp: entry.smtp
      ? {
          host: entry.smtp.host,
          port: entry.smtp.port ?? base.smtp.port,
          secure: entry.smtp.secure ?? base.smtp.secure,
          rejectUnauthorized: entry.smtp.tlsRejectUnauthorized ?? base.smtp.rejectUnauthorized,
          user: entry.smtp.user ?? (entry.smtp.password !== undefined || oauth2 ? (entry.imap.user ?? entry.address) : undefined),
          password: auth === 'password' ? resolve(entry.smtp.password, 'smtp.password') : undefined,
        }
      : { ...base.smtp, host: undefined, user: undefined, password: undefined },
    oauth2,
    replyMode,
    signature: normaliseSignature(entry.signature),
    language: entry.language,
    entityKey: entry.entityKey ?? base.entityKey,
  };
}

/** Line ends as `\n`, no trailing blank lines, no `-- ` line of its own (the renderer adds it); empty is none. */
function normaliseSignature(signature: string | undefined): string | undefined {
  if (signature === undefined) return undefined;
  const lines = signature.replace(/\r\n?/g, '\n').split('\n');
  if (lines[0]?.trimEnd() === '--') lines.shift();
  const text = lines.join('\n').trimEnd();
  return text.trim() === '' ? undefined : text;
}

/** `mailboxes[1] (billing@acme.example).imap.host`: the key, and the mailbox by its address when it has one. */
function describePath(issuePath: readonly PropertyKey[], data: unknown): string {
  if (issuePath.length === 0) return 'the file';
  let out = '';
  let node: unknown = data;
  for (const [i, key] of issuePath.entries()) {
    out += typeof key === 'number' ? `[${key}]` : `${out ? '.' : ''}${String(key)}`;
    node = node !== null && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    if (i === 1 && issuePath[0] === 'mailboxes' && node !== null && typeof node === 'object') {
      const address = (node as { address?: unknown }).address;
      // Only a real address: a value that is not one may be anything pasted there, a password included.
      if (typeof address === 'string' && address.length <= 254 && z.email().safeParse(address.trim()).success) out += ` (${address})`;
    }
  }
  return out;
}

type ReadResult = { ok: true; data: unknown } | { ok: false; problem: string };

/** YAML to plain data; errors and warnings (unknown tags, directives) refuse the file, by position and code only. */
function readYaml(text: string): ReadResult {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { uniqueKeys: true, prettyErrors: false, logLevel: 'silent', lineCounter });
  if (docs.length === 0) return { ok: true, data: null };
  const doc = docs[0]!;
  if (docs.length > 1) {
    const { line } = lineCounter.linePos(docs[1]!.range[0]);
    return { ok: false, problem: `not valid YAML: line ${line}: a second document (one file holds one)` };
  }
  const first = [...doc.errors, ...doc.warnings][0];
  if (first) {
    const { line, col } = lineCounter.linePos(first.pos[0]);
    return {
      ok: false,
      problem: `not valid YAML: line ${line}, column ${col}: ${first.code.toLowerCase().replace(/_/g, ' ')} (${first.code})`,
    };
  }
  try {
    return { ok: true, data: doc.toJS({ maxAliasCount: 100 }) };
  } catch {
    // Its message names the alias (`*hunter2`), which may be any text of the file.
    return { ok: false, problem: 'not valid YAML: an alias is unresolved or expands too far' };
  }
}

/** What V8's JSON.parse messages mean, by their fixed start (the rest may quote the file). */
const JSON_PROBLEMS: ReadonlyArray<[RegExp, string]> = [
  [/^Unexpected end of JSON input/, 'the file ends too early'],
  [/^Expected ',' or '}'/, "expected ',' or '}'"],
  [/^Expected ',' or ']'/, "expected ',' or ']'"],
  [/^Expected ':'/, "expected ':'"],
  [/^Expected double-quoted property name/, 'expected a key in double quotes'],
  [/^Bad control character in string literal/, 'a control character inside a string'],
  [/^Bad escaped character/, 'a bad escape in a string'],
  [/^Bad Unicode escape/, 'a bad escape in a string'],
  [/^Unterminated string/, 'a string is not closed'],
  [/^(Exponent part is missing|No number after minus sign|Unterminated fractional number)/, 'a malformed number'],
];

/** JSON to plain data; a syntax error by line, column and kind (V8 gives a position for most). */
function readJson(text: string): ReadResult {
  try {
    return { ok: true, data: JSON.parse(text) as unknown };
  } catch (error) {
    const message = error instanceof Error ? error.message : '';
    const kind = JSON_PROBLEMS.find(([pattern]) => pattern.test(message))?.[1] ?? 'unexpected character';
    const position = /at position (\d+)/.exec(message)?.[1];
    const offset = position !== undefined ? Number(position) : /^Unexpected end/.test(message) ? text.length : null;
    if (offset === null) return { ok: false, problem: `not valid JSON: ${kind}` };
    const before = text.slice(0, offset).split('\n');
    return { ok: false, problem: `not valid JSON: line ${before.length}, column ${before.at(-1)!.length + 1}: ${kind}` };
  }
}
