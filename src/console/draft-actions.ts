/**
 * What a reviewer can do to a draft: approve it (into the outbox the worker sends from), edit it,
 * discard it. Every change is conditional on the draft still being a `draft`, so two reviewers, or
 * one double click, can never send a reply twice or revive a discarded one.
 */
import type { MailboxRuntime, Runtime } from '../app/runtime.ts';
import { describeError } from '../errors.ts';
import { clearHandoff, settleUnknownSend } from '../store/attention.ts';
import { changeDraftUnderReview, draftExists } from '../store/draft-review.ts';
import { draftMailboxId } from '../store/mailboxes.ts';

/** The served mailbox a draft belongs to (its SMTP and Drafts folder); the primary one with a single mailbox. */
async function mailboxOf(runtime: Runtime, draftId: string): Promise<MailboxRuntime | undefined> {
  if (runtime.mailboxes.length === 1) return runtime.mailboxes[0];
  const mailboxId = await draftMailboxId(runtime.db, draftId);
  return runtime.mailboxes.find((m) => m.mailbox.id === mailboxId);
}

async function canSend(runtime: Runtime, draftId: string): Promise<boolean> {
  return Boolean((await mailboxOf(runtime, draftId))?.settings.smtp.host);
}

export type DraftActionResult = 'done' | 'not-a-draft' | 'not-found' | 'smtp-missing';

async function missingOrHandled(runtime: Runtime, draftId: string): Promise<'not-a-draft' | 'not-found'> {
  return (await draftExists(runtime.db, draftId)) ? 'not-a-draft' : 'not-found';
}

/**
 * If Redis is unreachable the draft stays `queued` and the worker's reconciler enqueues it later,
 * so an approval is never lost.
 */
async function enqueueSend(runtime: Runtime, draftId: string): Promise<void> {
  try {
    await runtime.queues().enqueueOutbox(draftId, 'send');
  } catch (error) {
    runtime.logger.warn('approved draft not enqueued yet; the reconciler will', { draftId, error: describeError(error) });
  }
}

/**
 * draft -> queued, then a send job for the worker. A draft flagged as needing a human may be
 * approved: the approval is the human's decision.
 */
export async function approveDraft(runtime: Runtime, draftId: string): Promise<DraftActionResult> {
  if (!(await canSend(runtime, draftId))) return 'smtp-missing';
  if (!(await changeDraftUnderReview(runtime.db, draftId, { status: 'queued' }))) return missingOrHandled(runtime, draftId);
  await enqueueSend(runtime, draftId);
  runtime.logger.info('draft approved in the console', { draftId });
  return 'done';
}

/**
 * The Drafts folder follows a console change (the edited text replaces the copy there, a discarded
 * or approved draft's copy goes). If Redis is unreachable the reconciler does it later.
 */
async function enqueueDraftsFolderUpdate(runtime: Runtime, draftId: string): Promise<void> {
  if (!(await mailboxOf(runtime, draftId))?.imapLogin) return;
  try {
    await runtime.queues().enqueueOutbox(draftId, 'append');
  } catch (error) {
    runtime.logger.warn('Drafts folder update not enqueued yet; the reconciler will', { draftId, error: describeError(error) });
  }
}

/** Replaces the body while the draft is still under review. */
export async function editDraft(runtime: Runtime, draftId: string, body: string): Promise<DraftActionResult> {
  if (!(await changeDraftUnderReview(runtime.db, draftId, { body }))) return missingOrHandled(runtime, draftId);
  await enqueueDraftsFolderUpdate(runtime, draftId);
  runtime.logger.info('draft edited in the console', { draftId });
  return 'done';
}

/** The edit and the approval in one step, so nothing can slip in between. */
export async function editAndSendDraft(runtime: Runtime, draftId: string, body: string): Promise<DraftActionResult> {
  if (!(await canSend(runtime, draftId))) return 'smtp-missing';
  if (!(await changeDraftUnderReview(runtime.db, draftId, { body, status: 'queued' }))) return missingOrHandled(runtime, draftId);
  await enqueueSend(runtime, draftId);
  runtime.logger.info('draft edited and approved in the console', { draftId });
  return 'done';
}

export async function discardDraft(runtime: Runtime, draftId: string): Promise<DraftActionResult> {
  if (!(await changeDraftUnderReview(runtime.db, draftId, { status: 'discarded' }))) return missingOrHandled(runtime, draftId);
  await enqueueDraftsFolderUpdate(runtime, draftId);
  runtime.logger.info('draft discarded in the console', { draftId });
  return 'done';
}

/**
 * A send whose outcome is unknown, settled by a person who checked: it arrived (recorded as
 * sent), or it did not (back to the outbox, sent again by the worker).
 */
export async function settleSend(runtime: Runtime, draftId: string, outcome: 'sent' | 'resend'): Promise<DraftActionResult> {
  if (outcome === 'resend' && !(await canSend(runtime, draftId))) return 'smtp-missing';
  if (!(await settleUnknownSend(runtime.db, draftId, outcome === 'sent' ? 'sent' : 'queued', new Date())))
    return missingOrHandled(runtime, draftId);
  if (outcome === 'resend') await enqueueSend(runtime, draftId);
  runtime.logger.info('unknown send settled in the console', { draftId, outcome });
  return 'done';
}

/** The person has taken over a thread the agent handed over; its marker is removed. */
export async function takeOverThread(runtime: Runtime, threadId: string): Promise<boolean> {
  return clearHandoff(runtime.db, threadId);
}
