/**
 * Replies and promotion inside a replay: the same use cases the workers run, called in-process on
 * the replay's virtual clock, so "the thread went quiet" happens deterministically.
 */
import type { Config } from '../config.ts';
import type { ReplayContext, ReplayStages } from '../ingest/replay.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { PromotionPolicy } from '../memory/promotion-policy.ts';
import { handleThreadTurn } from './handle-thread-turn.ts';
import { promoteThread, type PromotionDeps } from './promote-thread.ts';
import { sweepExpiredFacts } from './reconcile.ts';
import { turnSettings } from './turn-settings.ts';

export function createReplayStages(context: ReplayContext, config: Config, provider: LlmProvider, policy: PromotionPolicy): ReplayStages {
  let clock = new Date(0);
  const now = () => clock;
  const db = context.db.prisma;
  const logger = context.logger;
  const turnDeps = {
    db,
    provider,
    settings: turnSettings(config, context.settings.messageIdSecret, context.settings.supportAddress),
    logger,
    now,
  };
  const promotionDeps: PromotionDeps = {
    db,
    provider,
    policy,
    maxActiveFacts: config.memory.maxProfileFacts,
    quietAfterMs: config.memory.quietAfterMs,
    logger,
    now,
  };

  const promoteQuietThreads = async () => {
    const due = await db.thread.findMany({
      where: { mailboxId: context.mailbox.id, needsPromotion: true, lastMessageAt: { lte: new Date(clock.getTime() - config.memory.quietAfterMs) } },
      orderBy: { lastMessageAt: 'asc' },
      select: { id: true },
    });
    for (const thread of due) await promoteThread(promotionDeps, thread.id, 'quiet');
  };

  return {
    async onReplyNeeded(threadId, _result, at) {
      clock = at;
      const outcome = await handleThreadTurn(turnDeps, threadId);
      if (outcome.kind === 'drafted' && outcome.resolved) await promoteThread(promotionDeps, threadId, 'resolved');
    },
    async onClockAdvanced(at) {
      clock = at;
      await sweepExpiredFacts(db, clock);
      await promoteQuietThreads();
    },
    async onFinished(at) {
      clock = at;
      await sweepExpiredFacts(db, clock);
      await promoteQuietThreads();
      const open = await db.thread.findMany({
        where: { mailboxId: context.mailbox.id, needsPromotion: true },
        orderBy: { lastMessageAt: 'asc' },
        select: { id: true },
      });
      for (const thread of open) await promoteThread(promotionDeps, thread.id, 'replay-end');
    },
  };
}
