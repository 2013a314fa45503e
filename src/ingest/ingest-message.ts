/**
 * The one ingestion entry point, used by the IMAP poller, the .eml replay and the tests:
 * parse, classify, resolve the sender, thread, and persist idempotently; then hand the thread on
 * for a reply. Never throws for bad mail: unparseable mail is kept raw and marked `malformed`.
 */
import { entityKeyFor, foldPlusAddress, type EntityKeyOptions } from '../mail/addresses.ts';
import { trustedAuthVerdict, UNKNOWN_VERDICT } from '../mail/auth-results.ts';
import { classifyEmail, type SkipReason } from '../mail/classify.ts';
import { rawHashMessageId, syntheticMessageId, verifyAgentMessageId } from '../mail/message-id.ts';
import { parseRawEmail, type ParsedEmail } from '../mail/parse-message.ts';
import { extractReplyText } from '../mail/reply-text.ts';
import { isForwardSubject, normaliseSubject, sanitiseHeaderValue } from '../mail/subject.ts';
import { decideThread, headerIdsInPreferenceOrder, type ThreadDecision } from '../mail/threading.ts';
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { isUniqueViolation, type DbClient } from '../store/client.ts';
import type { Db } from '../store/database.ts';
import { findEntityByAddress, resolveEntity } from '../store/entities.ts';
import type { MailboxRecord } from '../store/mailboxes.ts';
import { findStoredMessage, insertMessage, type NewMessage } from '../store/messages.ts';
import {
  addParticipants,
  addThreadKeys,
  createThread,
  findSubjectMatch,
  findThreadKeys,
  loadCandidateThreads,
  touchThread,
} from '../store/threads.ts';

export type IngestSource =
  | { kind: 'imap'; folder: string; uid: number }
  | { kind: 'replay'; file: string }
  | { kind: 'api' };

export interface IngestOptions {
  /** When the message arrived; replay passes its virtual clock. Defaults to now. */
  receivedAt?: Date;
  /** The ingestion clock, for the reply age limit; replay passes its virtual clock. Defaults to now. */
  now?: Date;
}

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
  entityKey: EntityKeyOptions;
  foldPlusAddresses: boolean;
  subjectWindowMs: number;
  authservId: string | undefined;
  messageIdSecret: string;
  /** Customer mail older than this at ingestion is kept and threaded but gets no reply. */
  replyMaxAgeMs: number;
}

export interface IngestDeps {
  db: Db;
  mailbox: MailboxRecord;
  settings: IngestSettings;
  logger: Logger;
  /** Called after a customer message that needs a reply is safely stored. */
  onReplyNeeded?: (threadId: string, result: IngestResult) => Promise<void>;
}

export async function ingestRawMessage(deps: IngestDeps, raw: Buffer, source: IngestSource, options: IngestOptions = {}): Promise<IngestResult> {
  const receivedAt = options.receivedAt ?? new Date();
  const now = options.now ?? new Date();
  const parsed = await parseRawEmail(raw);
  const result = parsed.ok
    ? await storeParsed(deps, raw, parsed.email, source, receivedAt, now)
    : await storeMalformed(deps, raw, parsed.reason, source, receivedAt);
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

async function storeMalformed(deps: IngestDeps, raw: Buffer, reason: string, source: IngestSource, receivedAt: Date): Promise<IngestResult> {
  const messageId = rawHashMessageId(raw);
  const base = { messageId, threadId: null, entityId: null, outcome: 'skipped' as const, text: '', at: receivedAt, replyNeeded: false };
  const existing = await findStoredMessage(deps.db, deps.mailbox.id, messageId);
  if (existing) return { ...base, id: existing.id, skipReason: 'duplicate', skipDetail: 'same bytes stored before', stored: false };
  const row = sourceFields(source);
  try {
    const id = await insertMessage(deps.db, {
      mailboxId: deps.mailbox.id,
      messageId,
      syntheticId: true,
      threadId: null,
      entityId: null,
      direction: 'inbound',
      ...row,
      receivedAt,
      classification: 'malformed',
      skipReason: 'malformed',
      skipDetail: reason,
      status: 'malformed',
      raw,
    });
    return { ...base, id, skipReason: 'malformed', skipDetail: reason, stored: true };
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    const again = await findStoredMessage(deps.db, deps.mailbox.id, messageId);
    return { ...base, id: again?.id ?? '', skipReason: 'duplicate', skipDetail: 'stored concurrently', stored: false };
  }
}

async function storeParsed(
  deps: IngestDeps,
  raw: Buffer,
  email: ParsedEmail,
  source: IngestSource,
  receivedAt: Date,
  now: Date,
): Promise<IngestResult> {
  const { settings } = deps;
  const messageId = email.messageId ?? syntheticMessageId(email);
  const at = email.date ?? receivedAt;
  // A date in the future (a wrong clock or a forgery) must not make a backlog look fresh.
  const tooOld = Math.min(at.getTime(), receivedAt.getTime()) < now.getTime() - settings.replyMaxAgeMs;
  const text = extractReplyText({ text: email.textPart, html: email.html });

  const classification = classifyEmail(email, {
    supportAddress: settings.supportAddress,
    isAgentMessageId: (id) => verifyAgentMessageId(settings.messageIdSecret, id) !== null,
  });
  const verdict = trustedAuthVerdict(email.rawHeaders.get('authentication-results') ?? [], settings.authservId);
  const headerIds = headerIdsInPreferenceOrder(email.inReplyTo, email.references).filter((id) => id !== messageId);

  try {
    return await deps.db.$transaction(async (tx) => {
      const placement = classification.skipReason
        ? await placeSkipped(tx, deps, email, headerIds)
        : await placeCustomerMessage(tx, deps, email, headerIds, at);

      const id = await insertMessage(tx, {
        mailboxId: deps.mailbox.id,
        messageId,
        syntheticId: email.messageId === null,
        threadId: placement.threadId,
        entityId: placement.entityId,
        direction: 'inbound',
        ...sourceFields(source),
        fromAddress: email.from?.address ?? null,
        fromName: email.from?.name ?? null,
        replyTo: email.replyTo.find((r) => r.address)?.address ?? null,
        toAddresses: email.to.flatMap((a) => (a.address ? [a.address] : [])),
        ccAddresses: email.cc.flatMap((a) => (a.address ? [a.address] : [])),
        subject: sanitiseHeaderValue(email.subject),
        inReplyTo: email.inReplyTo[0] ?? null,
        references: email.references,
        sentAt: email.date,
        receivedAt,
        bodyText: email.bodyText,
        extractedText: text,
        attachments: email.attachments,
        classification: classification.skipReason ?? 'normal',
        skipReason: classification.skipReason,
        skipDetail: classification.detail ?? placement.note ?? (tooOld ? 'older than REPLY_MAX_AGE when ingested; kept without a reply' : null),
        authDmarc: verdict.dmarc,
        authDkim: verdict.dkim,
        authSpf: verdict.spf,
        status: classification.skipReason ? 'skipped' : tooOld ? 'no_reply_needed' : 'pending_reply',
        raw,
      });
      if (placement.threadId && !classification.skipReason) {
        await addThreadKeys(tx, deps.mailbox.id, placement.threadId, [
          { messageId, kind: 'seen' },
          ...headerIds.map((ref) => ({ messageId: ref, kind: 'referenced' as const })),
        ]);
        if (!placement.created) await touchThread(tx, placement.threadId, at);
      }
      return {
        id,
        messageId,
        threadId: placement.threadId,
        entityId: placement.entityId,
        outcome: classification.skipReason ? ('skipped' as const) : ('processed' as const),
        skipReason: classification.skipReason,
        skipDetail: classification.detail,
        text,
        stored: true,
        at,
        replyNeeded: !classification.skipReason && !tooOld,
      };
    });
  } catch (error) {
    // The Message-ID is known: a repeat delivery, a concurrent poller, or the agent's own reply
    // coming back. The unique key decides (no look-up before the insert: new mail is the usual case).
    if (!isUniqueViolation(error)) throw error;
    const existing = await findStoredMessage(deps.db, deps.mailbox.id, messageId);
    const ownReply = existing?.direction === 'outbound';
    return {
      id: existing?.id ?? '',
      messageId,
      threadId: existing?.threadId ?? null,
      entityId: existing?.entityId ?? null,
      outcome: 'skipped',
      skipReason: ownReply ? 'loop' : 'duplicate',
      skipDetail: ownReply ? "the agent's own reply came back" : `Message-ID seen before (${existing?.id ?? 'stored concurrently'})`,
      text,
      stored: false,
      at,
      replyNeeded: false,
    };
  }
}

interface Placement {
  threadId: string | null;
  entityId: string | null;
  note: string | null;
  /** A thread made for this message is already up to date. */
  created: boolean;
}

/** Automated mail creates no entity and no thread; it is filed with a thread only if its headers point at one. */
async function placeSkipped(tx: DbClient, deps: IngestDeps, email: ParsedEmail, headerIds: string[]): Promise<Placement> {
  const sender = email.from?.address ?? null;
  const entity = sender ? await findEntityByAddress(tx, sender) : null;
  const matches = await findThreadKeys(tx, deps.mailbox.id, trustworthyIds(deps, headerIds));
  return { threadId: matches[0]?.threadId ?? null, entityId: entity?.id ?? null, note: null, created: false };
}

async function placeCustomerMessage(tx: DbClient, deps: IngestDeps, email: ParsedEmail, headerIds: string[], at: Date): Promise<Placement> {
  const { settings } = deps;
  const from = email.from!;
  const sender = from.address!;
  const entityAddress = settings.foldPlusAddresses ? foldPlusAddress(sender) : sender;
  const entity = await resolveEntity(tx, entityAddress, entityKeyFor(entityAddress, settings.entityKey), from.name);

  const matches = await findThreadKeys(tx, deps.mailbox.id, trustworthyIds(deps, headerIds));
  const threads = await loadCandidateThreads(tx, matches.map((m) => m.threadId));
  const normalizedSubject = normaliseSubject(email.subject);
  const subjectMatch =
    matches.length === 0
      ? await findSubjectMatch(tx, {
          mailboxId: deps.mailbox.id,
          entityId: entity.id,
          normalizedSubject,
          since: new Date(at.getTime() - settings.subjectWindowMs),
        })
      : null;
  const decision: ThreadDecision = decideThread({
    senderAddress: sender,
    senderEntityId: entity.id,
    headerIds,
    matches,
    threads,
    subjectMatch,
    isForward: isForwardSubject(email.subject),
  });

  const threadId =
    decision.kind === 'join'
      ? decision.threadId
      : await createThread(tx, {
          mailboxId: deps.mailbox.id,
          entityId: entity.id,
          subject: sanitiseHeaderValue(email.subject),
          normalizedSubject,
          at,
          linkedThreadId: decision.linkedThreadId,
        });

  const others = [...email.to, ...email.cc]
    .map((a) => a.address)
    .filter((a): a is string => a !== null && a !== settings.supportAddress && a !== sender);
  await addParticipants(tx, threadId, [
    { address: sender, entityId: entity.id, role: decision.kind === 'new' ? 'primary' : 'participant' },
    ...[...new Set(others)].map((address) => ({ address, entityId: null, role: 'participant' as const })),
  ]);
  const note = decision.kind === 'new' ? (decision.linkedThreadId ? `new thread linked to ${decision.linkedThreadId}: ${decision.reason}` : null) : null;
  return { threadId, entityId: entity.id, note, created: decision.kind === 'new' };
}

/** Header IDs worth looking up: an ID shaped like the agent's own must carry a valid signature. */
function trustworthyIds(deps: IngestDeps, ids: string[]): string[] {
  return ids.filter((id) => !id.startsWith('<sa.') || verifyAgentMessageId(deps.settings.messageIdSecret, id) !== null);
}

function sourceFields(source: IngestSource): Pick<NewMessage, 'source' | 'imapFolder' | 'imapUid'> {
  return source.kind === 'imap'
    ? { source: 'imap', imapFolder: source.folder, imapUid: source.uid }
    : { source: source.kind, imapFolder: null, imapUid: null };
}

export { UNKNOWN_VERDICT };
