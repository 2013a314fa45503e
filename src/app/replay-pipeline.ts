/**
 * Replies and promotion inside a replay: the same use cases the workers run, called in-process on
 * the replay's virtual clock, so "the thread went quiet" happens deterministically. A failing turn
 * or promotion is recorded in the report and handled as the workers handle a final failure (the
 * turn goes to a person, the promotion is marked failed); the replay goes on.
 */
import type { Config } from '../config.ts';
import { AppError, describeError, isAppError } from '../errors.ts';
import type { ReplayContext, ReplayStages } from '../ingest/replay.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { PromotionPolicy } from '../memory/promotion-policy.ts';
import { markPromotionFailed } from '../store/turns.ts';
import { handleThreadTurn, handTurnToHuman } from './handle-thread-turn.ts';
import { promoteThread, type PromotionDeps, type PromotionTrigger } from './promote-thread.ts';
import { sweepExpiredFacts } from './reconcile.ts';
import { turnSettings } from './turn-settings.ts';

/** After this many turns in a row found the model unreachable, the rest are handed over without trying. */
const UNREACHABLE_GIVE_UP = 3;
/** A thread's pending mail is answered in at most this many turns per arrival (one per sender). */
const MAX_TURNS_PER_ARRIVAL = 10;

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
  let unreachableInARow = 0;

  const promote = async (threadId: string, trigger: PromotionTrigger) => {
    try {
      await promoteThread(promotionDeps, threadId, trigger);
    } catch (error) {
      context.recordFailure({ threadId, stage: 'promotion', error: describeError(error) });
      await markPromotionFailed(db, threadId, describeError(error), clock);
    }
  };

  const answer = async (threadId: string) => {
    for (let turn = 0; turn < MAX_TURNS_PER_ARRIVAL; turn++) {
      try {
        if (unreachableInARow >= UNREACHABLE_GIVE_UP) {
          throw new AppError('LLM_UNAVAILABLE', `the model was unreachable for ${UNREACHABLE_GIVE_UP} turns in a row; not tried again in this replay`);
        }
        const outcome = await handleThreadTurn(turnDeps, threadId);
        unreachableInARow = 0;
        if (outcome.kind === 'nothing-pending') return;
        if (outcome.kind === 'drafted' && outcome.resolved) await promote(threadId, 'resolved');
      } catch (error) {
        if (isAppError(error, 'LLM_UNAVAILABLE')) unreachableInARow++;
        context.recordFailure({ threadId, stage: 'turn', error: describeError(error) });
        // As the workers do after the last retry: a person answers instead.
        await handTurnToHuman(turnDeps, threadId, describeError(error)).catch((again: unknown) =>
          context.recordFailure({ threadId, stage: 'turn', error: `could not hand the turn to a person: ${describeError(again)}` }),
        );
      }
    }
  };

  const promoteQuietThreads = async () => {
    const due = await db.thread.findMany({
      where: { mailboxId: context.mailbox.id, needsPromotion: true, lastMessageAt: { lte: new Date(clock.getTime() - config.memory.quietAfterMs) } },
      orderBy: { lastMessageAt: 'asc' },
      select: { id: true },
    });
    for (const thread of due) await promote(thread.id, 'quiet');
  };

  return {
    async onReplyNeeded(threadId, _result, at) {
      clock = at;
      await answer(threadId);
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
      for (const thread of open) await promote(thread.id, 'replay-end');
    },
  };
}
