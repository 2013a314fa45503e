/**
 * The way out for drafts: SMTP sending and IMAP Drafts append, shared by the worker and the
 * console. The draft row's status is the outbox state: draft -> queued -> sending -> sent.
 */
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { jsonStringArray } from '../store/client.ts';
import type { Db } from '../store/database.ts';
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
}

const AGENT_HEADERS = { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All', 'X-Support-Agent': 'reply' };

async function loadDraftForMime(deps: OutboxDeps, draftId: string) {
  const draft = await deps.db.draft.findUnique({ where: { id: draftId } });
  if (!draft) throw new AppError('NOT_FOUND', `draft ${draftId} no longer exists`);
  const mime: DraftForMime = {
    fromAddress: deps.supportAddress,
    fromName: deps.supportName,
    to: draft.toAddress,
    subject: draft.subject,
    body: draft.body,
    messageId: draft.messageId,
    inReplyTo: draft.inReplyTo,
    references: jsonStringArray(draft.references),
    headers: AGENT_HEADERS,
    date: draft.createdAt,
  };
  return { draft, mime };
}

/**
 * Sends a queued draft exactly once as far as the database can tell: it moves queued -> sending
 * before talking to SMTP and sending -> sent after. A crash between the server's acceptance and
 * our record leaves it in `sending`; the retry sends again with the same Message-ID, so the
 * customer's client shows one message (the one at-least-once window, see README "Guarantees").
 */
export async function sendDraft(deps: OutboxDeps, draftId: string): Promise<'sent' | 'already-sent' | 'not-queued'> {
  if (!deps.sender) throw new AppError('CONFIG_INVALID', 'sending needs SMTP_HOST (REPLY_MODE=send)');
  const { draft, mime } = await loadDraftForMime(deps, draftId);
  if (draft.status === 'sent') return 'already-sent';
  if (draft.status !== 'queued' && draft.status !== 'sending') return 'not-queued';
  await deps.db.draft.updateMany({ where: { id: draftId, status: 'queued' }, data: { status: 'sending' } });
  try {
    const result = await deps.sender.send(mailOptions(mime));
    const now = new Date();
    await deps.db.$transaction(async (tx) => {
      await tx.draft.update({ where: { id: draftId }, data: { status: 'sent', sentAt: now, error: null } });
      await tx.message.updateMany({ where: { mailboxId: draft.mailboxId, messageId: draft.messageId }, data: { status: 'sent', sentAt: now } });
      // Some providers rewrite the Message-ID; replies will then reference the one they used.
      if (result.serverMessageId && result.serverMessageId !== draft.messageId) {
        await tx.threadKey.createMany({
          data: [{ mailboxId: draft.mailboxId, messageId: result.serverMessageId, threadId: draft.threadId, kind: 'outbound' }],
          skipDuplicates: true,
        });
      }
    });
    deps.logger.info('reply sent', { draftId, threadId: draft.threadId });
    return 'sent';
  } catch (error) {
    const permanent = error instanceof AppError && error.code === 'SMTP_REJECTED';
    await deps.db.draft.update({
      where: { id: draftId },
      data: { status: permanent ? 'failed' : 'queued', error: error instanceof Error ? error.message.slice(0, 500) : String(error) },
    });
    throw error;
  }
}

/** Puts the draft into the mailbox's Drafts folder (once), so a person can send it from their client. */
export async function appendDraft(deps: OutboxDeps, draftId: string): Promise<'appended' | 'already-appended' | 'not-a-draft'> {
  if (!deps.drafts) throw new AppError('CONFIG_INVALID', 'appending drafts needs IMAP_HOST');
  const { draft, mime } = await loadDraftForMime(deps, draftId);
  if (draft.imapAppendedAt) return 'already-appended';
  if (draft.status !== 'draft') return 'not-a-draft';
  await deps.drafts.appendOnce(draft.messageId, await renderMime(mime));
  await deps.db.draft.update({ where: { id: draftId }, data: { imapAppendedAt: new Date() } });
  return 'appended';
}
