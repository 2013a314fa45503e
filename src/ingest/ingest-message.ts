/**
 * Ingestion: parse, classify, resolve the sender, thread, and persist idempotently; then hand the
 * thread on for a reply. `ingestRawMessage` takes one message (the .eml replay, the tests);
 * `ingestInOrder` takes the poller's fetched chunks. Both run every message through the same
 * `prepare` (parsing in a worker thread, see parse-pool.ts) and `ingestPrepared`. Never throws for
 * bad mail: unparseable mail (or mail whose parsing ran out of time or memory) is kept raw and
 * marked `malformed`; mail above `maxMessageBytes` is not parsed and is kept as `too-large`.
 */
import { entityKeyFor, foldPlusAddress, type EntityKeyOptions } from '../mail/addresses.ts';
import { trustedAuthVerdict } from '../mail/auth-results.ts';
import { classifyEmail, type SkipReason } from '../mail/classify.ts';
import { routeTeamMail, teamSkip, teamThread } from './team-mail.ts';
import { rawHashMessageId, syntheticMessageId, verifyAgentMessageId } from '../mail/message-id.ts';
import { orderKeys } from '../mail/ingest-order.ts';
import type { ParsedEmail, ParseOutcome } from '../mail/parse-message.ts';
import { isForwardSubject, normaliseSubject, sanitiseHeaderValue } from '../mail/subject.ts';
import { decideThread, headerIdsInPreferenceOrder, type ThreadDecision } from '../mail/threading.ts';
import { describeError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Logger } from '../logger.ts';
import { resolveEntityFrom } from '../mail/entity-resolution.ts';
import type { MailboxRecord } from '../store/mailboxes.ts';
import {
  findStoredMessage,
  isDuplicateMessage,
  isStaleLookup,
  isUnstorableValue,
  lookupForIngest,
  writeIngested,
  type IngestWrite,
  type NewInboundMessage,
} from '../store/ingest-store.ts';
import type { SqlExecutor } from '../store/sql.ts';
import { runOrderedWindow } from './ordered-window.ts';
import { markDraftsBounced } from '../store/bounced-drafts.ts';
import { adoptSentDraft, draftByMessageId, pendingDraftsOfThread, recordDraftOutcomes } from '../store/draft-outcomes.ts';
import { settleDrafts } from '../memory/draft-outcome.ts';
import { DEFAULT_PARSE_SETTINGS, sharedParsePool, type MessageReader, type ParseSettings } from './parse-pool.ts';
import type { ReadMessage } from './read-message.ts';
import { attachmentFileLimits, DEFAULT_ATTACHMENT_SETTINGS, readAttachments, type AttachmentSettings } from './attachment-text.ts';
import { maskHeaders, maskReadMessage } from './mask-message.ts';

export type IngestSource = { kind: 'imap'; folder: string; uid: number } | { kind: 'replay'; file: string } | { kind: 'api' };

export interface IngestOptions {
  /** When the message arrived; replay passes its virtual clock. Defaults to now. */
  receivedAt?: Date;
  /** The ingestion clock, for the reply age limit; replay passes its virtual clock. Defaults to now. */
  now?: Date;
  /**
   * The message's whole size when `raw` holds only its first bytes (the poller fetches no more of a
   * message whose RFC822.SIZE is above `maxMessageBytes`). Defaults to `raw.length`.
   */
  totalBytes?: number;
  /**
   * The message comes from the mailbox's Sent folder (or a history's team side): the team's own
   * mail, stored as its reply when it threads, never answered.
   */
  sentByTeam?: boolean;
}

/** Default `maxMessageBytes`: a 25 MiB attachment (about 34 MB once base64-encoded) still fits. */
export const DEFAULT_MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

/**
 * Bytes kept of a message above `maxMessageBytes` (its raw start: headers and the beginning of the
 * body), so an operator can see what it was. The poller fetches exactly this much of it.
 */
export const TOO_LARGE_KEEP_BYTES = 1024 * 1024;

export interface IngestResult {
  /** Our row id (`m_…`). */
  id: string;
  messageId: string;
  threadId: string | null;
  entityId: string | null;
  outcome: 'processed' | 'skipped';
  skipReason: SkipReason | null;
  skipDetail: string | null;
  /** The new text only (quoted history and signature removed). */
  text: string;
  /** False when the message had been ingested before (an idempotent repeat). */
  stored: boolean;
  /** The message's own time (Date header, else arrival). */
  at: Date;
  /** A processed customer message that waits for a reply (not too old to answer). */
  replyNeeded: boolean;
}

export interface IngestSettings {
  supportAddress: string;
  /** The team's own addresses: their mail that threads is stored as the team's reply (never answered). */
  staffAddresses?: readonly string[];
  entityKey: EntityKeyOptions;
  foldPlusAddresses: boolean;
  subjectWindowMs: number;
  authservId: string | undefined;
  messageIdSecret: string;
  /** Customer mail older than this at ingestion is kept and threaded but gets no reply. */
  replyMaxAgeMs: number;
  /** Larger messages are not parsed: kept (their first bytes) as skipped `too-large`. */
  maxMessageBytes?: number;
  /** Parse workers and their per-message time and memory bounds. */
  parsing?: ParseSettings;
  /** Reading attachments' text (files, caps, worker bounds); defaults to DEFAULT_ATTACHMENT_SETTINGS. */
  attachments?: AttachmentSettings;
}

export interface IngestDeps {
  /** Plain SQL on the product's database (`Database.sql`): ingestion is its hot path. */
  sql: SqlExecutor;
  mailbox: MailboxRecord;
  settings: IngestSettings;
  logger: Logger;
  /** Called after a customer message that needs a reply is safely stored. */
  onReplyNeeded?: (threadId: string, result: IngestResult) => Promise<void>;
  /**
   * Called after the team's reply settled drafts (sent, replaced): their copies in the Drafts folder
   * are then brought in step. Failures are logged; the reconciler catches up.
   */
  onDraftsSettled?: (draftIds: string[]) => Promise<void>;
  /** How messages are parsed; defaults to the process's shared parse pool for `settings.parsing`. */
  reader?: MessageReader;
}

/** Ingests one message: the .eml replay, the tests. */
export async function ingestRawMessage(
  deps: IngestDeps,
  raw: Buffer,
  source: IngestSource,
  options: IngestOptions = {},
): Promise<IngestResult> {
  return ingestPrepared(deps, raw, await prepare(deps, raw, options), source, options);
}

export interface IngestItem {
  raw: Buffer;
  source: IngestSource;
  options?: IngestOptions;
}

/** How many unrelated messages of a chunk are stored side by side (each takes a pool connection). */
export const MAX_SIDE_BY_SIDE = 4;

type Prepared =
  { kind: 'read'; read: ReadMessage; keys: string[] } | { kind: 'too-large'; headers: ParseOutcome; totalBytes: number; keys: string[] };

/** Parses a message (off the main thread), or only its headers when it is over the size cap. */
async function prepare(deps: IngestDeps, raw: Buffer, options: IngestOptions): Promise<Prepared> {
  const reader = deps.reader ?? sharedParsePool(deps.settings.parsing ?? DEFAULT_PARSE_SETTINGS, deps.logger);
  const totalBytes = Math.max(raw.length, options.totalBytes ?? 0);
  if (totalBytes > (deps.settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES)) {
    const headers = await reader.readHeaders(raw.subarray(0, TOO_LARGE_KEEP_BYTES));
    return { kind: 'too-large', headers: maskHeaders(headers), totalBytes, keys: [`id:${tooLargeMessageId(headers, raw)}`] };
  }
  const attachmentSettings = deps.settings.attachments ?? DEFAULT_ATTACHMENT_SETTINGS;
  const read = await reader.read(raw, attachmentFileLimits(attachmentSettings));
  const { parsed } = read;
  if (!parsed.ok) return { kind: 'read', read, keys: [`id:${rawHashMessageId(raw)}`] };
  // Attachments' text is read here, before the message waits for its turn to be stored; the kept
  // bytes are dropped once read.
  const { attachmentFiles: _files, ...email } = parsed.email;
  const attachments = email.attachments.length > 0 ? await readAttachments(parsed.email, attachmentSettings, deps.logger) : null;
  const withText: ReadMessage = {
    ...read,
    parsed: { ok: true, email: attachments ? { ...email, attachments: attachments.attachments, attachmentText: attachments.text } : email },
  };
  // Sensitive values are masked here, before anything is stored, logged or prompted (mask-message.ts).
  return {
    kind: 'read',
    read: maskReadMessage(withText),
    keys: orderKeys(email, email.messageId ?? syntheticMessageId(email), deps.settings),
  };
}

/**
 * Ingests a fetched chunk with the result of storing it in order: a message starts only after
 * every earlier message it could depend on (`orderKeys`) is stored; up to `maxSideBySide`
 * unrelated messages are stored at once, and the next messages are parsed while the database
 * works. `onIngested` runs in the chunk's order, once a message and every message before it are
 * stored. A failure stops the run: everything reported is stored; a later message may be stored
 * too, and is recognised by its Message-ID when it comes again.
 */
export async function ingestInOrder(
  deps: IngestDeps,
  items: readonly IngestItem[],
  onIngested?: (result: IngestResult, index: number) => Promise<void> | void,
  maxSideBySide = MAX_SIDE_BY_SIDE,
): Promise<IngestResult[]> {
  return runOrderedWindow(items, {
    prepare: (item) => prepare(deps, item.raw, item.options ?? {}),
    keysOf: (prepared) => prepared.keys,
    run: (item, prepared) => ingestPrepared(deps, item.raw, prepared, item.source, item.options ?? {}),
    ...(onIngested ? { onDone: onIngested } : {}),
    maxSideBySide,
  });
}

async function ingestPrepared(
  deps: IngestDeps,
  raw: Buffer,
  prepared: Prepared,
  source: IngestSource,
  options: IngestOptions,
): Promise<IngestResult> {
  const receivedAt = options.receivedAt ?? new Date();
  const now = options.now ?? new Date();
  const parsed = prepared.kind === 'read' ? prepared.read.parsed : null;
  const result =
    prepared.kind === 'too-large'
      ? await storeTooLarge(deps, raw.subarray(0, TOO_LARGE_KEEP_BYTES), prepared.headers, prepared.totalBytes, source, receivedAt)
      : parsed?.ok
        ? await storeParsed(deps, raw, parsed.email, prepared.read.text, source, receivedAt, now, options.sentByTeam === true).catch(
            (error: unknown) => keepRawIfUnstorable(deps, raw, error, source, receivedAt),
          )
        : await storeMalformed(deps, raw, parsed?.reason ?? 'unparseable', source, receivedAt);
  deps.logger.debug('ingested', {
    id: result.id,
    threadId: result.threadId,
    outcome: result.outcome,
    skipReason: result.skipReason,
    stored: result.stored,
  });
  if (result.stored && result.replyNeeded && result.threadId && deps.onReplyNeeded) {
    try {
      await deps.onReplyNeeded(result.threadId, result);
    } catch (error) {
      // The message is safely stored as pending; the reconciler will enqueue its turn.
      deps.logger.warn('could not enqueue the reply turn; the reconciler will', { threadId: result.threadId, error: describeError(error) });
    }
  }
  return result;
}

/**
 * A value the parser let through but the database refuses (a data exception) must not stall the
 * mailbox by failing on every retry: the message is kept raw as malformed, with the reason.
 */
async function keepRawIfUnstorable(
  deps: IngestDeps,
  raw: Buffer,
  error: unknown,
  source: IngestSource,
  receivedAt: Date,
): Promise<IngestResult> {
  if (!isUnstorableValue(error)) throw error;
  deps.logger.warn('kept a message raw as malformed: the database refused one of its values', { error: describeError(error) });
  return storeMalformed(deps, raw, `parsed, but a value could not be stored: ${describeError(error).slice(0, 300)}`, source, receivedAt);
}

async function storeMalformed(
  deps: IngestDeps,
  raw: Buffer,
  reason: string,
  source: IngestSource,
  receivedAt: Date,
): Promise<IngestResult> {
  const messageId = rawHashMessageId(raw);
  const base = { messageId, threadId: null, entityId: null, outcome: 'skipped' as const, text: '', at: receivedAt, replyNeeded: false };
  const message: NewInboundMessage = {
    ...emptyMessage(deps, messageId, source, receivedAt, raw),
    syntheticId: true,
    classification: 'malformed',
    skipReason: 'malformed',
    skipDetail: reason,
    status: 'malformed',
  };
  try {
    await writeIngested(deps.sql, { message });
    return { ...base, id: message.id, skipReason: 'malformed', skipDetail: reason, stored: true };
  } catch (error) {
    if (!isDuplicateMessage(error)) throw error;
    const again = await findStoredMessage(deps.sql, deps.mailbox.id, messageId);
    return { ...base, id: again?.id ?? '', skipReason: 'duplicate', skipDetail: 'same bytes stored before', stored: false };
  }
}

/** The Message-ID a too-large message is stored under: its own, else a hash of its kept bytes. */
function tooLargeMessageId(headers: ParseOutcome, raw: Buffer): string {
  return (headers.ok ? headers.email.messageId : null) ?? rawHashMessageId(raw.subarray(0, TOO_LARGE_KEEP_BYTES));
}

/**
 * A message over `maxMessageBytes` is never parsed nor answered: its first bytes are kept raw, as
 * skipped `too-large`, with the sender, subject and date from its headers when they could be read.
 */
async function storeTooLarge(
  deps: IngestDeps,
  head: Buffer,
  headers: ParseOutcome,
  totalBytes: number,
  source: IngestSource,
  receivedAt: Date,
): Promise<IngestResult> {
  const limit = deps.settings.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const messageId = tooLargeMessageId(headers, head);
  const email = headers.ok ? headers.email : null;
  const detail =
    `${totalBytes.toLocaleString('en-US')} bytes, more than MAX_MESSAGE_BYTES (${limit.toLocaleString('en-US')}): not parsed; ` +
    `the first ${head.length.toLocaleString('en-US')} bytes are kept`;
  const message: NewInboundMessage = {
    ...emptyMessage(deps, messageId, source, receivedAt, head),
    syntheticId: (email?.messageId ?? null) === null,
    fromAddress: email?.from?.address ?? null,
    fromName: email?.from?.name ?? null,
    toAddresses: email ? email.to.flatMap((a) => (a.address ? [a.address] : [])) : [],
    ccAddresses: email ? email.cc.flatMap((a) => (a.address ? [a.address] : [])) : [],
    subject: email ? sanitiseHeaderValue(email.subject) : '',
    sentAt: email?.date ?? null,
    classification: 'too-large',
    skipReason: 'too-large',
    skipDetail: detail,
    status: 'skipped',
  };
  const base = {
    messageId,
    threadId: null,
    entityId: null,
    outcome: 'skipped' as const,
    text: '',
    at: email?.date ?? receivedAt,
    replyNeeded: false,
  };
  try {
    await writeIngested(deps.sql, { message });
    deps.logger.warn('kept a message too large to parse', { id: message.id, bytes: totalBytes, limit });
    return { ...base, id: message.id, skipReason: 'too-large', skipDetail: detail, stored: true };
  } catch (error) {
    if (!isDuplicateMessage(error)) throw error;
    const again = await findStoredMessage(deps.sql, deps.mailbox.id, messageId);
    return {
      ...base,
      id: again?.id ?? '',
      skipReason: 'duplicate',
      skipDetail: `Message-ID seen before (${again?.id ?? 'stored concurrently'})`,
      stored: false,
    };
  }
}

/** What every stored message takes from its parsed headers and body, whoever wrote it. */
function headerFields(email: ParsedEmail, text: string) {
  return {
    syntheticId: email.messageId === null,
    fromAddress: email.from?.address ?? null,
    fromName: email.from?.name ?? null,
    toAddresses: email.to.flatMap((a) => (a.address ? [a.address] : [])),
    ccAddresses: email.cc.flatMap((a) => (a.address ? [a.address] : [])),
    subject: sanitiseHeaderValue(email.subject),
    inReplyTo: email.inReplyTo[0] ?? null,
    references: email.references,
    sentAt: email.date,
    bodyText: email.bodyText,
    extractedText: text,
    attachments: email.attachments,
    attachmentText: email.attachmentText ?? '',
  } satisfies Partial<NewInboundMessage>;
}

function emptyMessage(deps: IngestDeps, messageId: string, source: IngestSource, receivedAt: Date, raw: Buffer): NewInboundMessage {
  return {
    id: newId('m'),
    mailboxId: deps.mailbox.id,
    messageId,
    syntheticId: false,
    threadId: null,
    entityId: null,
    ...sourceFields(source),
    fromAddress: null,
    fromName: null,
    replyTo: null,
    toAddresses: [],
    ccAddresses: [],
    subject: '',
    inReplyTo: null,
    references: [],
    sentAt: null,
    receivedAt,
    bodyText: '',
    extractedText: '',
    attachments: [],
    attachmentText: '',
    classification: 'normal',
    skipReason: null,
    skipDetail: null,
    authDmarc: null,
    authDkim: null,
    authSpf: null,
    status: 'received',
    raw,
  };
}

async function storeParsed(
  deps: IngestDeps,
  raw: Buffer,
  email: ParsedEmail,
  text: string,
  source: IngestSource,
  receivedAt: Date,
  now: Date,
  sentByTeam: boolean,
): Promise<IngestResult> {
  const { settings } = deps;
  const messageId = email.messageId ?? syntheticMessageId(email);
  const at = email.date ?? receivedAt;
  const classified = classifyEmail(email, {
    supportAddress: settings.supportAddress,
    isAgentMessageId: (id) => verifyAgentMessageId(settings.messageIdSecret, id) !== null,
  });
  // The team is who can prove it (src/mail/team-identity.ts, src/ingest/team-mail.ts): never From alone.
  const route = routeTeamMail(email, settings, sentByTeam, classified);
  if (route.kind === 'team') {
    const team = await storeTeamReply(deps, raw, email, text, messageId, source, receivedAt, sentByTeam);
    if (team) return team;
  } else if (route.kind === 'not-team') {
    return teamSkip(messageId, text, email.date ?? receivedAt, 'not-team-mail', route.detail);
  }
  const classification = route.kind === 'inbound' ? route.classification : classified;
  // A date in the future (a wrong clock or a forgery) must not make a backlog look fresh.
  const tooOld = Math.min(at.getTime(), receivedAt.getTime()) < now.getTime() - settings.replyMaxAgeMs;

  // A report that one of our replies could not be delivered marks that draft bounced (idempotent, so
  // a retried ingestion may repeat it); the report is filed with the reply's thread. Lenient header
  // repairs are logged and noted on the message.
  const report = classification.report;
  if (report?.failed) {
    const error = `bounced: ${report.diagnostic ?? 'no diagnostic in the report'} (report ${messageId})`;
    const bounced = await markDraftsBounced(deps.sql, { mailboxId: deps.mailbox.id, messageIds: report.originalMessageIds, error });
    if (bounced.length > 0) deps.logger.info('reply bounced', { drafts: bounced.map((d) => d.id), report: messageId });
  }
  const repairNote = email.repairs.length > 0 ? `header section repaired: ${email.repairs.join('; ')}` : null;
  if (repairNote) deps.logger.info('parsed leniently', { messageId, repairs: email.repairs });
  const verdict = trustedAuthVerdict(email.rawHeaders.get('authentication-results') ?? [], settings.authservId);
  const headerIds = headerIdsInPreferenceOrder(email.inReplyTo, email.references).filter((id) => id !== messageId);

  const message: NewInboundMessage = {
    ...emptyMessage(deps, messageId, source, receivedAt, raw),
    ...headerFields(email, text),
    replyTo: email.replyTo.find((r) => r.address)?.address ?? null,
    classification: classification.skipReason ?? 'normal',
    skipReason: classification.skipReason,
    authDmarc: verdict.dmarc,
    authDkim: verdict.dkim,
    authSpf: verdict.spf,
    status: classification.skipReason ? 'skipped' : tooOld ? 'no_reply_needed' : 'pending_reply',
  };
  const stored = {
    id: message.id,
    messageId,
    outcome: classification.skipReason ? ('skipped' as const) : ('processed' as const),
    skipReason: classification.skipReason,
    skipDetail: classification.detail,
    text,
    stored: true,
    at,
    replyNeeded: !classification.skipReason && !tooOld,
  };

  // A second look is needed only when a concurrent writer changed what the first one saw.
  for (let attempt = 1; ; attempt++) {
    const placement = classification.skipReason
      ? await placeSkipped(deps, email, [...headerIds, ...(report?.originalMessageIds ?? [])])
      : await placeCustomerMessage(deps, email, messageId, headerIds, at);
    const decided =
      classification.detail ?? placement.note ?? (tooOld ? 'older than REPLY_MAX_AGE when ingested; kept without a reply' : null);
    const skipDetail = [decided, repairNote].filter((note) => note !== null).join('; ') || null;
    try {
      await writeIngested(deps.sql, {
        ...placement.write,
        ...(classification.skipReason === 'unverified-team' && placement.threadId
          ? { handOff: { id: placement.threadId, reason: `not the team's mail: ${classification.detail ?? ''}`, at: now } }
          : {}),
        message: { ...message, threadId: placement.threadId, entityId: placement.entityId, skipDetail },
      });
      return { ...stored, threadId: placement.threadId, entityId: placement.entityId };
    } catch (error) {
      if (isStaleLookup(error) && attempt < 3) continue;
      // The Message-ID is known: a repeat delivery, a concurrent poller, or the agent's own reply
      // coming back. The unique key decides (no look-up before the insert: new mail is the usual case).
      if (!isDuplicateMessage(error)) throw error;
      const existing = await findStoredMessage(deps.sql, deps.mailbox.id, messageId);
      const ownReply = existing?.direction === 'outbound';
      return {
        ...stored,
        id: existing?.id ?? '',
        threadId: existing?.threadId ?? null,
        entityId: existing?.entityId ?? null,
        outcome: 'skipped',
        skipReason: ownReply ? 'loop' : 'duplicate',
        skipDetail: ownReply ? "the agent's own reply came back" : `Message-ID seen before (${existing?.id ?? 'stored concurrently'})`,
        stored: false,
        replyNeeded: false,
      };
    }
  }
}

/**
 * The team's own mail: from the Sent folder, or from a staff address. A message that threads by its
 * headers is stored in its thread as the team's reply (outbound, by staff), answers the customer
 * mail written before it, and settles the thread's pending drafts (sent as drafted, edited, or
 * replaced). The agent's draft sent by a person with its Message-ID kept becomes that reply. The
 * agent's own sent mail (REPLY_MODE=send) is recognised and skipped. Null: staff mail in no known
 * thread, which is then handled as any other mail; mail from the Sent folder in no known thread is
 * not stored at all (the team's other correspondence is none of the agent's business).
 */
async function storeTeamReply(
  deps: IngestDeps,
  raw: Buffer,
  email: ParsedEmail,
  text: string,
  messageId: string,
  source: IngestSource,
  receivedAt: Date,
  sentByTeam: boolean,
): Promise<IngestResult | null> {
  const at = email.date ?? receivedAt;
  const sent = { messageId, inReplyTo: email.inReplyTo[0] ?? null, text, sentAt: at };
  const result = (
    id: string,
    threadId: string | null,
    skip: { reason: SkipReason; detail: string } | null,
    stored: boolean,
  ): IngestResult => ({
    id,
    messageId,
    threadId,
    entityId: null,
    outcome: skip ? 'skipped' : 'processed',
    skipReason: skip?.reason ?? null,
    skipDetail: skip?.detail ?? null,
    text,
    stored,
    at,
    replyNeeded: false,
  });

  const draft = await draftByMessageId(deps.sql, deps.mailbox.id, messageId);
  if (draft) {
    const existing = await findStoredMessage(deps.sql, deps.mailbox.id, messageId);
    // A draft still for a person, or one taken off review (superseded, discarded, replaced) that a
    // person sent all the same from a copy they had open: what was sent is the team's reply. Any
    // other status means the agent sent it itself (its copy in Sent), or it was recorded already.
    const forPerson = (draft.status === 'draft' || draft.status === 'discarded') && existing?.author === 'agent';
    if (!forPerson) {
      const ownSend = existing?.author === 'agent';
      return result(
        existing?.id ?? '',
        draft.threadId,
        {
          reason: ownSend ? 'loop' : 'duplicate',
          detail: ownSend ? "the agent's own reply, filed in Sent" : `Message-ID seen before (${existing?.id ?? draft.id})`,
        },
        false,
      );
    }
    const pending = await pendingDraftsOfThread(deps.sql, draft.threadId);
    const settlements = settleDrafts(sent, pending.some((d) => d.id === draft.id) ? pending : [draft, ...pending]);
    await adoptSentDraft(deps.sql, {
      mailboxId: deps.mailbox.id,
      messageId,
      bodyText: email.bodyText,
      extractedText: text,
      sentAt: at,
      receivedAt,
      ...sourceFields(source),
    });
    await recordDraftOutcomes(deps.sql, settlements, { messageId, at });
    await draftsSettled(deps, settlements);
    deps.logger.info('a person sent the agent’s draft', {
      draftId: draft.id,
      outcome: settlements.find((x) => x.draftId === draft.id)?.outcome,
    });
    return result(existing?.id ?? '', draft.threadId, null, true);
  }

  const headerIds = trustworthyIds(
    deps,
    headerIdsInPreferenceOrder(email.inReplyTo, email.references).filter((id) => id !== messageId),
  );
  // Only a thread whose customer is among the recipients (headers alone never decide).
  const placed = await teamThread(deps, email, headerIds, at);
  const threadId = placed.threadId;
  if (!threadId) {
    if (!sentByTeam && !placed.otherCustomer) return null;
    const detail = placed.otherCustomer ?? 'sent mail in no known thread: not stored';
    deps.logger.info('team mail joins no thread', { messageId, reason: placed.otherCustomer ? 'other-customer' : 'no-thread' });
    return result('', null, { reason: 'not-in-a-thread', detail }, false);
  }

  const message: NewInboundMessage = {
    ...emptyMessage(deps, messageId, source, receivedAt, raw),
    direction: 'outbound',
    author: 'staff',
    ...headerFields(email, text),
    threadId,
    status: 'sent',
  };
  try {
    await writeIngested(deps.sql, {
      message,
      teamReplied: { id: threadId, at, answersOpenItems: true },
      threadKeys: { mailboxId: deps.mailbox.id, threadId, keys: [{ messageId, kind: 'outbound' }] },
    });
  } catch (error) {
    if (!isDuplicateMessage(error)) throw error;
    const again = await findStoredMessage(deps.sql, deps.mailbox.id, messageId);
    return result(
      again?.id ?? '',
      again?.threadId ?? null,
      { reason: 'duplicate', detail: `Message-ID seen before (${again?.id ?? 'stored concurrently'})` },
      false,
    );
  }
  const settlements = settleDrafts(sent, await pendingDraftsOfThread(deps.sql, threadId));
  await recordDraftOutcomes(deps.sql, settlements, { messageId, at });
  await draftsSettled(deps, settlements);
  deps.logger.info('stored the team’s reply', { id: message.id, threadId, drafts: settlements.map((x) => `${x.draftId}:${x.outcome}`) });
  return result(message.id, threadId, null, true);
}

async function draftsSettled(deps: IngestDeps, settlements: ReadonlyArray<{ draftId: string }>): Promise<void> {
  if (settlements.length === 0 || !deps.onDraftsSettled) return;
  try {
    await deps.onDraftsSettled(settlements.map((x) => x.draftId));
  } catch (error) {
    deps.logger.warn('could not schedule the Drafts folder update; the reconciler will', { error: describeError(error) });
  }
}

interface Placement {
  threadId: string | null;
  entityId: string | null;
  note: string | null;
  /** What to store besides the message itself. */
  write: Omit<IngestWrite, 'message'>;
}

/** Automated mail creates no entity and no thread; it is filed with a thread only if its headers point at one. */
async function placeSkipped(deps: IngestDeps, email: ParsedEmail, headerIds: string[]): Promise<Placement> {
  const found = await lookupForIngest(deps.sql, {
    mailboxId: deps.mailbox.id,
    address: email.from?.address ?? null,
    entityKey: null,
    headerIds: trustworthyIds(deps, headerIds),
    normalizedSubject: '',
    subjectSince: new Date(0),
  });
  return { threadId: found.matches[0]?.threadId ?? null, entityId: found.linked?.id ?? null, note: null, write: {} };
}

async function placeCustomerMessage(
  deps: IngestDeps,
  email: ParsedEmail,
  messageId: string,
  headerIds: string[],
  at: Date,
): Promise<Placement> {
  const { settings } = deps;
  const from = email.from!;
  const sender = from.address!;
  const entityAddress = settings.foldPlusAddresses ? foldPlusAddress(sender) : sender;
  const identity = entityKeyFor(entityAddress, settings.entityKey);
  const normalizedSubject = normaliseSubject(email.subject);
  const found = await lookupForIngest(deps.sql, {
    mailboxId: deps.mailbox.id,
    address: entityAddress,
    entityKey: identity.key,
    headerIds: trustworthyIds(deps, headerIds),
    normalizedSubject,
    subjectSince: new Date(at.getTime() - settings.subjectWindowMs),
  });
  const resolution = resolveEntityFrom({
    linked: found.linked,
    byKey: found.byKey,
    identity,
    displayName: from.name,
    newEntityId: newId('e'),
  });
  const entity = resolution.entity;

  const decision: ThreadDecision = decideThread({
    senderAddress: sender,
    senderEntityId: entity.id,
    headerIds,
    matches: found.matches,
    threads: found.threads,
    subjectMatch: found.subjectMatch,
    isForward: isForwardSubject(email.subject),
  });
  const threadId = decision.kind === 'join' ? decision.threadId : newId('t');

  const others = [...email.to, ...email.cc]
    .map((a) => a.address)
    .filter((a): a is string => a !== null && a !== settings.supportAddress && a !== sender);
  const note =
    decision.kind === 'new'
      ? decision.linkedThreadId
        ? `new thread linked to ${decision.linkedThreadId}: ${decision.reason}`
        : null
      : null;
  return {
    threadId,
    entityId: entity.id,
    note,
    write: {
      ...(resolution.create ? { newEntity: entity } : {}),
      ...(resolution.rename && entity.name ? { renameEntity: { id: entity.id, name: entity.name } } : {}),
      ...(resolution.attachAddress
        ? { attachAddress: { id: newId('ea'), entityId: entity.id, address: entityAddress, displayName: from.name } }
        : {}),
      ...(decision.kind === 'new'
        ? {
            newThread: {
              id: threadId,
              mailboxId: deps.mailbox.id,
              entityId: entity.id,
              subject: sanitiseHeaderValue(email.subject),
              normalizedSubject,
              at,
              linkedThreadId: decision.linkedThreadId,
            },
          }
        : { touchThread: { id: threadId, at } }),
      participants: {
        threadId,
        rows: [
          { address: sender, entityId: entity.id, role: decision.kind === 'new' ? 'primary' : 'participant' },
          ...[...new Set(others)].map((address) => ({ address, entityId: null, role: 'participant' as const })),
        ],
      },
      threadKeys: {
        mailboxId: deps.mailbox.id,
        threadId,
        keys: [{ messageId, kind: 'seen' }, ...headerIds.map((ref) => ({ messageId: ref, kind: 'referenced' as const }))],
      },
    },
  };
}

/** Header IDs worth looking up: an ID shaped like the agent's own must carry a valid signature. */
function trustworthyIds(deps: IngestDeps, ids: string[]): string[] {
  return ids.filter((id) => !id.startsWith('<sa.') || verifyAgentMessageId(deps.settings.messageIdSecret, id) !== null);
}

function sourceFields(source: IngestSource): Pick<NewInboundMessage, 'source' | 'imapFolder' | 'imapUid'> {
  return source.kind === 'imap'
    ? { source: 'imap', imapFolder: source.folder, imapUid: source.uid }
    : { source: source.kind, imapFolder: null, imapUid: null };
}
