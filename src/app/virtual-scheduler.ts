/**
 * The pipeline's scheduler for replay and tests: an inline queue on a virtual clock. Nothing runs
 * until `runUntil(t)`, which runs every task due at or before `t` in time order -- turns at once,
 * promotions at their due time, moving the clock to it -- including tasks those tasks schedule.
 * Like BullMQ, it keeps at most one waiting turn and one waiting promotion per thread. A task that
 * fails is handed to the pipeline's final-failure transition at once (no retries: a replay should
 * show a failure, not hide it behind backoff).
 */
import { describeError } from '../errors.ts';
import type { ScheduledTrigger } from '../memory/promotion-schedule.ts';
import type { OutboxAction, Pipeline, Scheduler } from './pipeline.ts';

export interface VirtualClock {
  now(): Date;
  set(at: Date): void;
}

export function virtualClock(start: Date): VirtualClock {
  let current = start;
  return {
    now: () => current,
    set: (at) => {
      if (at > current) current = at;
    },
  };
}

export interface TaskFailure {
  stage: 'turn' | 'promotion' | 'outbox';
  threadId: string | null;
  error: string;
}

/** Bounds one `runUntil`: a pipeline that keeps scheduling itself must not spin forever. */
const MAX_TASKS_PER_RUN = 100_000;

export class VirtualScheduler implements Scheduler {
  private readonly turns: string[] = [];
  private readonly promotions = new Map<string, { trigger: ScheduledTrigger; at: Date }>();
  /** Outbox work is only recorded: a replay sends nothing and has no Drafts folder. */
  readonly outbox: Array<{ draftId: string; action: OutboxAction }> = [];

  constructor(
    private readonly clock: VirtualClock,
    private readonly onFailure: (failure: TaskFailure) => void = () => {},
  ) {}

  async turnDue(threadId: string): Promise<void> {
    if (!this.turns.includes(threadId)) this.turns.push(threadId);
  }

  async promotionDue(threadId: string, trigger: ScheduledTrigger, at: Date): Promise<void> {
    this.promotions.set(threadId, { trigger, at });
  }

  async outboxDue(draftId: string, action: OutboxAction): Promise<void> {
    this.outbox.push({ draftId, action });
  }

  /** Runs every task due by `until` against the pipeline, then leaves the clock at `until`. */
  async runUntil(until: Date, pipeline: Pipeline): Promise<void> {
    for (let ran = 0; ran < MAX_TASKS_PER_RUN; ran++) {
      const threadId = this.turns.shift();
      if (threadId !== undefined) {
        await this.run(
          'turn',
          threadId,
          () => pipeline.runTurn(threadId),
          (reason) => pipeline.turnFailed(threadId, reason),
        );
        continue;
      }
      const next = this.nextPromotion(until);
      if (!next) break;
      this.promotions.delete(next.threadId);
      this.clock.set(next.at);
      await this.run(
        'promotion',
        next.threadId,
        () => pipeline.runPromotion(next.threadId, next.trigger),
        (reason) => pipeline.promotionFailed(next.threadId, reason),
      );
    }
    this.clock.set(until);
  }

  /** Promotions still waiting, for a caller that wants to run what is left at the end. */
  pendingPromotions(): string[] {
    return [...this.promotions.keys()];
  }

  private nextPromotion(until: Date): { threadId: string; trigger: ScheduledTrigger; at: Date } | null {
    let best: { threadId: string; trigger: ScheduledTrigger; at: Date } | null = null;
    for (const [threadId, p] of this.promotions) {
      if (p.at > until) continue;
      if (!best || p.at < best.at || (p.at.getTime() === best.at.getTime() && threadId < best.threadId)) best = { threadId, ...p };
    }
    return best;
  }

  private async run(
    stage: TaskFailure['stage'],
    threadId: string,
    work: () => Promise<unknown>,
    failed: (reason: string) => Promise<void>,
  ): Promise<void> {
    try {
      await work();
    } catch (error) {
      const reason = describeError(error);
      this.onFailure({ stage, threadId, error: reason });
      await failed(reason).catch((again: unknown) =>
        this.onFailure({ stage, threadId, error: `could not hand it over: ${describeError(again)}` }),
      );
    }
  }
}
