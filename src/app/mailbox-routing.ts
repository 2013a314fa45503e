/**
 * One agent, several mailboxes: each mailbox has its own pipeline (its address, name, reply mode,
 * signature, SMTP and Drafts/Sent folders), and the queues are shared. This facade gives the workers
 * and the console one `Pipeline` that hands each thread's and draft's work to its own mailbox's.
 */
import { AppError } from '../errors.ts';
import type { Db } from '../store/database.ts';
import { draftMailboxId, threadMailboxId } from '../store/mailboxes.ts';
import type { Pipeline, ReconcileReport } from './pipeline.ts';

export interface MailboxPipeline {
  mailboxId: string;
  pipeline: Pipeline;
}

export function routePipelines(db: Db, routes: readonly MailboxPipeline[]): Pipeline {
  const primary = routes[0]!.pipeline;
  // One mailbox: nothing to look up.
  if (routes.length === 1) return primary;
  const byId = new Map(routes.map((r) => [r.mailboxId, r.pipeline]));
  const served = (mailboxId: string | null, what: string): Pipeline => {
    // A thread or draft of no mailbox (deleted meanwhile): any pipeline reports it missing the usual way.
    if (mailboxId === null) return primary;
    const pipeline = byId.get(mailboxId);
    // Never answered from another mailbox's address: the mailbox was taken out of MAILBOXES_FILE.
    if (!pipeline) throw new AppError('CONFIG_INVALID', `${what} belongs to a mailbox this agent does not serve (not in MAILBOXES_FILE)`);
    return pipeline;
  };
  const forThread = async (threadId: string) => served(await threadMailboxId(db, threadId), `thread ${threadId}`);
  const forDraft = async (draftId: string) => served(await draftMailboxId(db, draftId), `draft ${draftId}`);

  return {
    messageStored: (result) => primary.messageStored(result),
    runTurn: async (threadId) => (await forThread(threadId)).runTurn(threadId),
    // A thread of a mailbox no longer served is handed to a person all the same (nothing is sent).
    turnFailed: async (threadId, reason) => (await forThread(threadId).catch(() => primary)).turnFailed(threadId, reason),
    // Promotions are about the customer (shared by every mailbox); the pipelines differ only in what follows a turn.
    runPromotion: (threadId, trigger) => primary.runPromotion(threadId, trigger),
    promotionRequested: (threadId) => primary.promotionRequested(threadId),
    promotionFailed: (threadId, reason) => primary.promotionFailed(threadId, reason),
    runOutbox: async (draftId, action) => (await forDraft(draftId)).runOutbox(draftId, action),
    async draftsSettled(draftIds) {
      for (const draftId of draftIds) await (await forDraft(draftId)).draftsSettled([draftId]);
    },
    async reconcile() {
      let total: ReconcileReport | null = null;
      for (const { pipeline } of routes) {
        const report = await pipeline.reconcile();
        total = total ? sumReports(total, report) : report;
      }
      return total!;
    },
  };
}

function sumReports(a: ReconcileReport, b: ReconcileReport): ReconcileReport {
  return {
    turns: a.turns + b.turns,
    sends: a.sends + b.sends,
    appends: a.appends + b.appends,
    promotions: a.promotions + b.promotions,
    expiredFacts: a.expiredFacts + b.expiredFacts,
    overdueCommitments: a.overdueCommitments + b.overdueCommitments,
    sendsFoundSent: a.sendsFoundSent + b.sendsFoundSent,
    sendsUnknown: a.sendsUnknown + b.sendsUnknown,
  };
}
