/**
 * The way out for drafts: SMTP sending and IMAP Drafts append, shared by the worker and the
 * console. The draft row's status is the outbox state: draft -> queued -> sending -> sent.
 */
import { AppError, describeError, isAppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { Db } from '../store/database.ts';
import {
  claimDraftForSending,
  loadAnsweredMessage,
  loadOutboxDraft,
  markAppended,
  markCopyRemoved,
  markSendUnknown,
  recordSent,
  releaseSendClaim,
  staleDraftCopies,
  type OutboxDraft,
} from '../store/outbox-store.ts';
import { renderReply } from '../mail/reply-render.ts';
import { mailOptions, renderMime, type DraftForMime } from './render-mime.ts';
import type { MailSender } from './smtp-sender.ts';
import type { DraftsFolder } from './imap-drafts.ts';

export interface OutboxDeps {
  db: Db;
  supportAddress: string;
  supportName: string;
  logger: Logger;
  sender?: MailSender;
  drafts?: DraftsFolder;
  /** How replies look (docs/replies.md "Replies as a mail client sends them"); plain text only when absent. */
  reply?: { signature?: string | undefined; quoteOriginal: boolean };
  /** Waits between attempts to record a send's outcome (injectable for tests). */
  sleep?: (ms: number) => Promise<void>;
}

/** Mail the agent sends itself is automatic (RFC 3834), and says so. */
const AGENT_HEADERS = { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All', 'X-Support-Agent': 'reply' };
/**
 * A draft is sent by a person from their own client: it must not go out marked as automatic (many
 * clients keep a draft's headers when sending it). The mark still lets the agent recognise it.
 */
const DRAFT_HEADERS = { 'X-Support-Agent': 'draft' };

/**
 * The message for a draft: text and HTML parts rendered from the draft's text at the moment it
 * leaves (so a console edit is what goes out), the signature, the answered message quoted, the Cc
 * decided at the turn.
 */
async function mimeOf(deps: OutboxDeps, draft: OutboxDraft, headers: Record<string, string> = AGENT_HEADERS): Promise<DraftForMime> {
  const quote = deps.reply?.quoteOriginal ? await loadAnsweredMessage(deps.db, draft.turnId) : null;
  const rendered = deps.reply ? renderReply({ body: draft.body, signature: deps.reply.signature, quote }) : null;
  return {
    fromAddress: deps.supportAddress,
    fromName: deps.supportName,
    to: draft.toAddress,
    cc: draft.ccAddresses,
    subject: draft.subject,
    body: rendered?.text ?? draft.body,
    ...(rendered ? { html: rendered.html } : {}),
    messageId: draft.messageId,
    inReplyTo: draft.inReplyTo,
    references: draft.references,
    headers,
    date: draft.createdAt,
  };
}

/** Delays between attempts to record what SMTP did, about two minutes in all (a database restart). */
const RECORD_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000, 15_000, 15_000, 15_000, 15_000, 15_000, 15_000, 15_000];

/**
 * Records a send's outcome, trying again while the database is away: once the SMTP server has
 * answered, the answer must land, or the draft would look unsent (and be sent again) or stay
 * claimed (and wait for a person) for nothing.
 */
async function recordOutcome(deps: OutboxDeps, what: string, write: () => Promise<unknown>): Promise<void> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt++) {
    try {
      await write();
      return;
    } catch (error) {
      const delay = RECORD_DELAYS_MS[attempt];
      if (delay === undefined) throw error;
      deps.logger.warn(`could not record ${what}; trying again`, { attempt: attempt + 1, error: describeError(error) });
      await sleep(delay);
    }
  }
}

export type SendOutcome = 'sent' | 'already-sent' | 'not-queued' | 'claimed-elsewhere';

/**
 * Sends a queued draft at most once. The send is claimed by one conditional update (queued ->
 * sending) that only one caller can win; a caller that finds the draft `sending` (a duplicate job
 * after Redis lost its data, a retry after a crash) never sends it again: if the claimer's record
 * never arrives, the reconciler checks the Sent folder or holds the draft for a person
 * (`send_unknown`). The one window left: the process dies after the SMTP server accepted the
 * message and before the outcome is written (docs/guarantees.md "Guarantees").
 */
export async function sendDraft(deps: OutboxDeps, draftId: string): Promise<SendOutcome> {
  if (!deps.sender) throw new AppError('CONFIG_INVALID', 'sending needs SMTP_HOST (REPLY_MODE=send)');
  const draft = await loadOutboxDraft(deps.db, draftId);
  if (draft.status === 'sent') return 'already-sent';
  if (draft.status === 'sending' || draft.status === 'send_unknown') return 'claimed-elsewhere';
  if (draft.status !== 'queued') return 'not-queued';
  // Rendered before the claim: a failure here leaves the draft queued, not claimed.
  const message = mailOptions(await mimeOf(deps, draft));
  if (!(await claimDraftForSending(deps.db, draftId, new Date()))) return 'claimed-elsewhere';

  let serverMessageId: string | null;
  try {
    ({ serverMessageId } = await deps.sender.send(message));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (isAppError(error, 'SMTP_OUTCOME_UNKNOWN')) {
      await recordOutcome(deps, 'an unknown send outcome', () => markSendUnknown(deps.db, draftId, message));
      deps.logger.warn('send outcome unknown; held for a person', { draftId, threadId: draft.threadId });
    } else {
      const permanent = isAppError(error, 'SMTP_REJECTED');
      await recordOutcome(deps, 'a failed send', () => releaseSendClaim(deps.db, draftId, permanent ? 'failed' : 'queued', message));
    }
    throw error;
  }
  await recordOutcome(deps, 'a sent reply', () => recordSent(deps.db, draft, serverMessageId, new Date()));
  deps.logger.info('reply sent', { draftId, threadId: draft.threadId });
  return 'sent';
}

/**
 * Puts the draft into the mailbox's Drafts folder (once), so a person can send it from their client,
 * and first brings the thread's other copies in step (see `syncDraftsFolder`).
 */
export async function appendDraft(deps: OutboxDeps, draftId: string): Promise<'appended' | 'already-appended' | 'not-a-draft'> {
  if (!deps.drafts) throw new AppError('CONFIG_INVALID', 'appending drafts needs IMAP_HOST');
  const draft = await loadOutboxDraft(deps.db, draftId);
  await syncDraftsFolder(deps, draft.threadId);
  const now = await loadOutboxDraft(deps.db, draftId);
  if (now.imapAppendedAt) return 'already-appended';
  if (now.status !== 'draft') return 'not-a-draft';
  const copy = await deps.drafts.appendOnce(now.messageId, await renderMime(await mimeOf(deps, now, DRAFT_HEADERS)));
  await markAppended(deps.db, draftId, new Date(), copy);
  return 'appended';
}

/**
 * The Drafts folder in step with the thread's drafts: the copy of a draft no longer under review
 * (superseded by a newer turn, discarded, replaced by what the team sent, sent) is removed, and a
 * draft edited in the console has its old copy removed and its new text appended.
 */
async function syncDraftsFolder(deps: OutboxDeps, threadId: string): Promise<void> {
  const folder = deps.drafts!;
  for (const id of await staleDraftCopies(deps.db, threadId)) {
    const draft = await loadOutboxDraft(deps.db, id);
    const removed = await folder.remove(draft.messageId, draft.imapCopy);
    await markCopyRemoved(deps.db, id);
    deps.logger.info('draft copy removed from the Drafts folder', { draftId: id, status: draft.status, removed });
    if (draft.status === 'draft') {
      const copy = await folder.appendOnce(draft.messageId, await renderMime(await mimeOf(deps, draft, DRAFT_HEADERS)));
      await markAppended(deps.db, id, new Date(), copy);
    }
  }
}
