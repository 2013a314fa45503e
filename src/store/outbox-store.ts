/**
 * The outbox's rows: a draft's way out (draft -> queued -> sending -> sent), the claim that makes a
 * send happen once, and the record of what happened. Plain records in and out.
 */
import { AppError } from '../errors.ts';
import { jsonStringArray, type DbClient } from './client.ts';
import type { Db } from './database.ts';

export interface OutboxDraft {
  id: string;
  threadId: string;
  mailboxId: string;
  toAddress: string;
  ccAddresses: string[];
  turnId: string;
  subject: string;
  body: string;
  messageId: string;
  inReplyTo: string | null;
  references: string[];
  status: string;
  needsHuman: boolean;
  imapAppendedAt: Date | null;
  /** Where its copy in the Drafts folder is (kept after an edit until the stale copy is removed). */
  imapCopy: { uid: number; uidValidity: bigint } | null;
  createdAt: Date;
}

export async function loadOutboxDraft(db: DbClient, draftId: string): Promise<OutboxDraft> {
  const d = await db.draft.findUnique({ where: { id: draftId } });
  if (!d) throw new AppError('NOT_FOUND', `draft ${draftId} no longer exists`);
  return {
    id: d.id,
    threadId: d.threadId,
    mailboxId: d.mailboxId,
    toAddress: d.toAddress,
    ccAddresses: jsonStringArray(d.ccAddresses),
    turnId: d.turnId,
    subject: d.subject,
    body: d.body,
    messageId: d.messageId,
    inReplyTo: d.inReplyTo,
    references: jsonStringArray(d.references),
    status: d.status,
    needsHuman: d.needsHuman,
    imapAppendedAt: d.imapAppendedAt,
    imapCopy: d.imapUid !== null && d.imapUidValidity !== null ? { uid: Number(d.imapUid), uidValidity: d.imapUidValidity } : null,
    createdAt: d.createdAt,
  };
}

/**
 * The message a draft answers (the last customer message of its turn), for quoting below the
 * reply: only that message, never the rest of the thread. Null when it is gone (erased).
 */
export async function loadAnsweredMessage(
  db: DbClient,
  turnId: string,
): Promise<{ date: Date; fromName: string | null; fromAddress: string; text: string } | null> {
  const m = await db.message.findFirst({
    where: { turnId, direction: 'inbound' },
    orderBy: [{ sentAt: 'desc' }, { receivedAt: 'desc' }, { id: 'desc' }],
    select: { sentAt: true, receivedAt: true, fromName: true, fromAddress: true, bodyText: true },
  });
  if (!m || !m.fromAddress) return null;
  return { date: m.sentAt ?? m.receivedAt, fromName: m.fromName, fromAddress: m.fromAddress, text: m.bodyText };
}

/**
 * queued -> sending, as one conditional update: true only for the one caller whose update changed
 * the row. Every other caller (a duplicate job after Redis lost its data, a retry) sees false and
 * must not send.
 */
export async function claimDraftForSending(db: DbClient, draftId: string, now: Date): Promise<boolean> {
  const claimed = await db.draft.updateMany({ where: { id: draftId, status: 'queued' }, data: { status: 'sending', sendClaimedAt: now } });
  return claimed.count === 1;
}

/** sending -> queued (try again later) or failed (refused for good), after a send that did not happen. */
export async function releaseSendClaim(db: DbClient, draftId: string, status: 'queued' | 'failed', error: string): Promise<void> {
  await db.draft.updateMany({
    where: { id: draftId, status: 'sending' },
    data: { status, sendClaimedAt: null, error: error.slice(0, 500) },
  });
}

/** sending -> send_unknown: the message may or may not have gone out; a person decides. */
export async function markSendUnknown(db: DbClient, draftId: string, reason: string): Promise<boolean> {
  const moved = await db.draft.updateMany({
    where: { id: draftId, status: 'sending' },
    data: { status: 'send_unknown', needsHuman: true, error: reason.slice(0, 500) },
  });
  return moved.count === 1;
}

/**
 * Records a send the SMTP server accepted (also from `send_unknown`, when the worker's own record
 * comes after the reconciler gave up on it), the outbound message's status, and a Message-ID the
 * server used instead of ours so replies to it still thread.
 */
export async function recordSent(
  db: Db,
  draft: Pick<OutboxDraft, 'id' | 'mailboxId' | 'messageId' | 'threadId'>,
  serverMessageId: string | null,
  now: Date,
): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.draft.updateMany({
      where: { id: draft.id, status: { in: ['sending', 'send_unknown'] } },
      data: { status: 'sent', sentAt: now, error: null },
    });
    // The agent sent it: as drafted, or as a reviewer edited it in the console (see changeDraftUnderReview).
    await tx.draft.updateMany({
      where: { id: draft.id, outcome: 'pending', outcomeSimilarity: null },
      data: { outcome: 'sent-as-is', outcomeSimilarity: 1, outcomeMatch: 'agent', outcomeAt: now },
    });
    await tx.draft.updateMany({
      where: { id: draft.id, outcome: 'pending', outcomeSimilarity: { not: null } },
      data: { outcome: 'sent-edited', outcomeMatch: 'agent', outcomeAt: now },
    });
    await tx.message.updateMany({
      where: { mailboxId: draft.mailboxId, messageId: draft.messageId },
      data: { status: 'sent', sentAt: now },
    });
    if (serverMessageId && serverMessageId !== draft.messageId) {
      await tx.threadKey.createMany({
        data: [{ mailboxId: draft.mailboxId, messageId: serverMessageId, threadId: draft.threadId, kind: 'outbound' }],
        skipDuplicates: true,
      });
    }
  });
}

export async function markAppended(
  db: DbClient,
  draftId: string,
  at: Date,
  copy: { uid: number; uidValidity: bigint } | null,
): Promise<void> {
  await db.draft.update({
    where: { id: draftId },
    data: { imapAppendedAt: at, imapUid: copy ? BigInt(copy.uid) : null, imapUidValidity: copy?.uidValidity ?? null },
  });
}

/** The draft's copy in the Drafts folder is gone. */
export async function markCopyRemoved(db: DbClient, draftId: string): Promise<void> {
  await db.draft.update({ where: { id: draftId }, data: { imapAppendedAt: null, imapUid: null, imapUidValidity: null } });
}

/**
 * Drafts of the thread whose copy in the Drafts folder is out of step: no longer under review
 * (superseded, discarded, replaced, sent) but still there, or edited in the console since (no
 * longer marked appended, but a copy remembered).
 */
export async function staleDraftCopies(db: DbClient, threadId: string): Promise<string[]> {
  const rows = await db.draft.findMany({
    where: {
      threadId,
      OR: [
        { status: { not: 'draft' }, imapAppendedAt: { not: null } },
        { status: 'draft', imapAppendedAt: null, imapUid: { not: null } },
      ],
    },
    orderBy: { createdAt: 'asc' },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** Drafts waiting in the outbox (queued), for the reconciler. */
export async function queuedDraftIds(db: DbClient, mailboxId: string): Promise<string[]> {
  const rows = await db.draft.findMany({ where: { mailboxId, status: 'queued' }, select: { id: true } });
  return rows.map((r) => r.id);
}

/** Drafts for the Drafts folder not appended yet, and drafts whose copy there should go. */
export async function unappendedDraftIds(db: DbClient, mailboxId: string): Promise<string[]> {
  const rows = await db.draft.findMany({
    where: {
      mailboxId,
      OR: [
        { status: 'draft', imapAppendedAt: null },
        { status: { not: 'draft' }, imapAppendedAt: { not: null } },
      ],
    },
    select: { id: true },
  });
  return rows.map((r) => r.id);
}

/** Sends claimed before `before` whose outcome was never recorded (the claimer died, or its write never landed). */
export async function staleSendClaims(
  db: DbClient,
  mailboxId: string,
  before: Date,
): Promise<Array<Pick<OutboxDraft, 'id' | 'mailboxId' | 'messageId' | 'threadId'>>> {
  return db.draft.findMany({
    where: { mailboxId, status: 'sending', OR: [{ sendClaimedAt: null }, { sendClaimedAt: { lt: before } }] },
    select: { id: true, mailboxId: true, messageId: true, threadId: true },
  });
}
