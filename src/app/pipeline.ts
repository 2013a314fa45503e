/**
 * Every transition of the pipeline, in one place: a stored customer message makes a turn due; a
 * turn sends its draft to the outbox and schedules its thread's promotion (or hands the thread to
 * a person when it fails for good); a promotion that is not due yet is rescheduled; after Redis
 * lost its data the reconciler rebuilds everything due from PostgreSQL; expired facts are swept.
 *
 * Time and queues come through a small `Scheduler` port with two adapters: BullMQ for the
 * long-running workers (src/app/bullmq-scheduler.ts) and an inline virtual clock for replay and
 * tests (src/app/virtual-scheduler.ts). Both drive these same transitions.
 */
import { describeError } from '../errors.ts';
import type { IngestResult } from '../ingest/ingest-message.ts';
import type { Logger } from '../logger.ts';
import {
  closesThread,
  promotionDueAt,
  type PromotionCadence,
  type ScheduledTrigger,
  type ThreadActivity,
} from '../memory/promotion-schedule.ts';
import { appendDraft, sendDraft, type OutboxDeps } from '../outbound/outbox.ts';
import type { SentFolder } from '../outbound/imap-sent.ts';
import type { Db } from '../store/database.ts';
import { markSendUnknown, queuedDraftIds, recordSent, staleSendClaims, unappendedDraftIds } from '../store/outbox-store.ts';
import { expireFacts } from '../store/profiles.ts';
import { markOverdueCommitments, threadsNeedingPromotion } from '../store/promotions.ts';
import { markPromotionFailed, pendingTurnThreadIds } from '../store/turns.ts';
import { handleThreadTurn, handTurnToHuman, type TurnDeps, type TurnOutcome } from './handle-thread-turn.ts';
import { promoteThread, type PromotionDeps, type PromotionOutcome, type PromotionTrigger } from './promote-thread.ts';

/** The pipeline's only view of time and queues. */
export interface Scheduler {
  /** A turn should run for this thread as soon as possible (at most one waits per thread). */
  turnDue(threadId: string): Promise<void>;
  /** The thread's promotion should run at `at` (replacing any promotion still waiting for it). */
  promotionDue(threadId: string, trigger: ScheduledTrigger, at: Date): Promise<void>;
  /** A draft should be sent, or appended to the mailbox's Drafts folder. */
  outboxDue(draftId: string, action: OutboxAction): Promise<void>;
}

export type OutboxAction = 'send' | 'append';

export interface PipelineDeps {
  db: Db;
  mailboxId: string;
  turns: TurnDeps;
  promotions: PromotionDeps;
  /** Created on first use (it opens SMTP and IMAP connections). */
  outbox: () => OutboxDeps;
  scheduler: Scheduler;
  /** Drafts are appended to the Drafts folder (IMAP is configured). */
  appendsDrafts: boolean;
  /** Where a send whose outcome was lost may be found (IMAP Sent folder), if anywhere. */
  sentFolder: () => SentFolder | null;
  cadence: PromotionCadence;
  sendUnknownAfterMs: number;
  logger: Logger;
  now: () => Date;
}

export interface ReconcileReport {
  turns: number;
  sends: number;
  appends: number;
  promotions: number;
  expiredFacts: number;
  /** Open commitments that turned overdue in this sweep. */
  overdueCommitments: number;
  /** Stale send claims settled: found in the Sent folder, or held for a person. */
  sendsFoundSent: number;
  sendsUnknown: number;
}

export interface Pipeline {
  /** stored -> turn due (for a customer message that waits for a reply). */
  messageStored(result: IngestResult): Promise<void>;
  /** A turn, then: its draft to the outbox, its promotion scheduled, the next turn if mail still waits. */
  runTurn(threadId: string): Promise<TurnOutcome>;
  /** A turn failed for good (every retry used): a person answers instead. */
  turnFailed(threadId: string, reason: string): Promise<void>;
  /** A promotion pass; one that is not due yet is rescheduled for when it is. */
  runPromotion(threadId: string, trigger: PromotionTrigger): Promise<PromotionOutcome>;
  /** An operator's checkpoint ("Promote now"): a pass over the thread's unseen messages, due at once. */
  promotionRequested(threadId: string): Promise<void>;
  /** A promotion failed for good: the thread stops asking for one until new mail arrives. */
  promotionFailed(threadId: string, reason: string): Promise<void>;
  runOutbox(draftId: string, action: OutboxAction): Promise<string>;
  /** Rebuilds every job the database says should exist (after Redis lost its data, and periodically), sweeps expired facts. */
  reconcile(): Promise<ReconcileReport>;
}

export function createPipeline(deps: PipelineDeps): Pipeline {
  const { scheduler } = deps;

  const afterTurn = async (threadId: string, outcome: TurnOutcome | null) => {
    if (!outcome || outcome.kind === 'nothing-pending') return;
    if (outcome.kind === 'drafted') {
      if (outcome.queuedToSend) await scheduler.outboxDue(outcome.draftId, 'send');
      else if (deps.appendsDrafts) await scheduler.outboxDue(outcome.draftId, 'append');
      // The model saw something durable (a new phone number, a changed preference): a pass now.
      if (outcome.checkpoint) await scheduler.promotionDue(threadId, 'checkpoint', deps.now());
      else await schedulePromotion(threadId, { ...outcome.activity, status: outcome.resolved ? 'resolved' : outcome.activity.status });
    }
    if (outcome.morePending) await scheduler.turnDue(threadId);
  };

  /** The thread's next pass: periodic while it stays active, quiet when it rests, at once when resolved. */
  const schedulePromotion = async (threadId: string, activity: ThreadActivity) => {
    const due = promotionDueAt(activity, deps.cadence);
    await scheduler.promotionDue(threadId, due.trigger, latest(due.at, deps.now()));
  };

  const pipeline: Pipeline = {
    async messageStored(result) {
      if (result.stored && result.replyNeeded && result.threadId) await scheduler.turnDue(result.threadId);
    },

    async runTurn(threadId) {
      const outcome = await handleThreadTurn(deps.turns, threadId);
      await afterTurn(threadId, outcome);
      return outcome;
    },

    async turnFailed(threadId, reason) {
      await afterTurn(threadId, await handTurnToHuman(deps.turns, threadId, reason));
    },

    async runPromotion(threadId, trigger) {
      const outcome = await promoteThread(deps.promotions, threadId, trigger);
      if (outcome.kind === 'not-due') await scheduler.promotionDue(threadId, outcome.due.trigger, outcome.due.at);
      // A pass that did not close the thread: the next one (more backlog, or the quiet close) is scheduled.
      if (outcome.kind === 'promoted' && !closesThread(trigger)) await schedulePromotion(threadId, outcome.activity);
      else if (outcome.kind === 'promoted' && outcome.activity.uncovered > 0) await schedulePromotion(threadId, outcome.activity);
      return outcome;
    },

    async promotionRequested(threadId) {
      await scheduler.promotionDue(threadId, 'operator', deps.now());
    },

    async promotionFailed(threadId, reason) {
      await markPromotionFailed(deps.db, threadId, reason, deps.now());
    },

    async runOutbox(draftId, action) {
      return action === 'send' ? sendDraft(deps.outbox(), draftId) : appendDraft(deps.outbox(), draftId);
    },

    async reconcile() {
      const { db, mailboxId } = deps;
      const now = deps.now();
      const pending = await pendingTurnThreadIds(db, mailboxId);
      for (const threadId of pending) await scheduler.turnDue(threadId);

      const queued = await queuedDraftIds(db, mailboxId);
      for (const draftId of queued) await scheduler.outboxDue(draftId, 'send');

      const unappended = deps.appendsDrafts ? await unappendedDraftIds(db, mailboxId) : [];
      for (const draftId of unappended) await scheduler.outboxDue(draftId, 'append');

      const settled = await settleStaleSends(deps, now);

      const waiting = await threadsNeedingPromotion(db, mailboxId);
      for (const thread of waiting) await schedulePromotion(thread.id, thread);

      const expiredFacts = await expireFacts(db, now);
      const overdueCommitments = await markOverdueCommitments(db, now);
      return {
        turns: pending.length,
        sends: queued.length,
        appends: unappended.length,
        promotions: waiting.length,
        expiredFacts,
        overdueCommitments,
        ...settled,
      };
    },
  };
  return pipeline;
}

function latest(a: Date, b: Date): Date {
  return a > b ? a : b;
}

/**
 * A send claimed long ago whose outcome never arrived is never re-queued: it is settled from the
 * Sent folder when the message is there, or held for a person (`send_unknown`).
 */
async function settleStaleSends(deps: PipelineDeps, now: Date): Promise<{ sendsFoundSent: number; sendsUnknown: number }> {
  const stale = await staleSendClaims(deps.db, deps.mailboxId, new Date(now.getTime() - deps.sendUnknownAfterMs));
  let sendsFoundSent = 0;
  let sendsUnknown = 0;
  for (const draft of stale) {
    const sent = deps.sentFolder();
    const found = sent
      ? await sent.contains(draft.messageId).catch((error: unknown) => {
          deps.logger.warn('could not search the Sent folder', { draftId: draft.id, error: describeError(error) });
          return false;
        })
      : false;
    if (found) {
      await recordSent(deps.db, draft, null, now);
      sendsFoundSent++;
    } else if (
      await markSendUnknown(
        deps.db,
        draft.id,
        'the send was claimed but its outcome was never recorded (the process stopped mid-send); check whether the customer got it, then confirm or send again',
      )
    ) {
      deps.logger.warn('send outcome unknown; held for a person', { draftId: draft.id, threadId: draft.threadId });
      sendsUnknown++;
    }
  }
  return { sendsFoundSent, sendsUnknown };
}
