import { describe, expect, it } from 'vitest';
import { VirtualScheduler, virtualClock, type TaskFailure } from '../../src/app/virtual-scheduler.ts';
import type { Pipeline } from '../../src/app/pipeline.ts';
import { promotionDueAt } from '../../src/memory/promotion-schedule.ts';

const t0 = new Date('2026-11-01T00:00:00Z');
const hours = (h: number) => new Date(t0.getTime() + h * 3_600_000);
const cadence = (quietAfterMs: number, everyMs = 24 * 3_600_000, everyMessages = 10) => ({ quietAfterMs, everyMs, everyMessages });
const activity = (lastMessageAt: Date, status: string, uncovered = 0, oldestUncoveredAt: Date | null = null) => ({
  lastMessageAt,
  status,
  uncovered,
  oldestUncoveredAt,
});

/** A pipeline that records what ran, when, and can be told to fail or to schedule more. */
function fakePipeline(clock: { now(): Date }, scheduler: VirtualScheduler, behaviour: { failTurn?: string; quietAfterH?: number } = {}) {
  const log: string[] = [];
  const pipeline: Pipeline = {
    messageStored: async () => {},
    runTurn: async (threadId) => {
      log.push(`turn ${threadId} @${clock.now().toISOString().slice(11, 16)}`);
      if (threadId === behaviour.failTurn) throw new Error('model down');
      await scheduler.promotionDue(
        threadId,
        'quiet',
        promotionDueAt(activity(clock.now(), 'open'), cadence((behaviour.quietAfterH ?? 2) * 3_600_000)).at,
      );
      return { kind: 'nothing-pending' };
    },
    turnFailed: async (threadId, reason) => void log.push(`handed ${threadId}: ${reason}`),
    promotionRequested: async (threadId) => scheduler.promotionDue(threadId, 'operator', clock.now()),
    runPromotion: async (threadId, trigger) => {
      log.push(`promote ${threadId} ${trigger} @${clock.now().toISOString().slice(11, 16)}`);
      return { kind: 'nothing-new', closed: true };
    },
    promotionFailed: async () => {},
    runOutbox: async () => 'sent',
    reconcile: async () => ({
      turns: 0,
      sends: 0,
      appends: 0,
      promotions: 0,
      expiredFacts: 0,
      sendsFoundSent: 0,
      sendsUnknown: 0,
      overdueCommitments: 0,
    }),
  };
  return { pipeline, log };
}

describe('the virtual scheduler', () => {
  it('runs turns at once and promotions at their due time, in time order, moving the clock', async () => {
    const clock = virtualClock(t0);
    const scheduler = new VirtualScheduler(clock);
    const { pipeline, log } = fakePipeline(clock, scheduler);
    await scheduler.turnDue('a');
    await scheduler.runUntil(t0, pipeline);
    clock.set(hours(1));
    await scheduler.turnDue('b');
    await scheduler.runUntil(hours(1), pipeline);
    expect(log).toEqual(['turn a @00:00', 'turn b @01:00']);
    await scheduler.runUntil(hours(10), pipeline);
    expect(log.slice(2)).toEqual(['promote a quiet @02:00', 'promote b quiet @03:00']);
    expect(clock.now()).toEqual(hours(10));
  });

  it('keeps one waiting turn per thread and lets a later schedule replace a waiting promotion', async () => {
    const clock = virtualClock(t0);
    const scheduler = new VirtualScheduler(clock);
    const { pipeline, log } = fakePipeline(clock, scheduler);
    await scheduler.turnDue('a');
    await scheduler.turnDue('a');
    await scheduler.promotionDue('x', 'quiet', hours(1));
    await scheduler.promotionDue('x', 'quiet', hours(5));
    await scheduler.runUntil(hours(4), pipeline);
    expect(log.filter((l) => l.startsWith('turn'))).toHaveLength(1);
    expect(log.some((l) => l.startsWith('promote x'))).toBe(false);
    await scheduler.runUntil(hours(6), pipeline);
    expect(log.filter((l) => l.startsWith('promote x'))).toEqual(['promote x quiet @05:00']);
  });

  it('hands a failed task to the final-failure transition and reports it, then goes on', async () => {
    const clock = virtualClock(t0);
    const failures: TaskFailure[] = [];
    const scheduler = new VirtualScheduler(clock, (f) => failures.push(f));
    const { pipeline, log } = fakePipeline(clock, scheduler, { failTurn: 'bad' });
    await scheduler.turnDue('bad');
    await scheduler.turnDue('good');
    await scheduler.runUntil(t0, pipeline);
    expect(log).toEqual(['turn bad @00:00', 'handed bad: model down', 'turn good @00:00']);
    expect(failures).toEqual([{ stage: 'turn', threadId: 'bad', error: 'model down' }]);
  });

  it('never moves the clock backwards', () => {
    const clock = virtualClock(hours(5));
    clock.set(hours(1));
    expect(clock.now()).toEqual(hours(5));
  });
});

describe('the quiet rule', () => {
  it('is due QUIET_AFTER after the last message, or at once when resolved', () => {
    expect(promotionDueAt(activity(t0, 'open'), cadence(72 * 3_600_000))).toEqual({ trigger: 'quiet', at: hours(72) });
    expect(promotionDueAt(activity(t0, 'closed'), cadence(3_600_000))).toEqual({ trigger: 'quiet', at: hours(1) });
    expect(promotionDueAt(activity(t0, 'resolved'), cadence(72 * 3_600_000))).toEqual({ trigger: 'resolved', at: t0 });
  });

  it('is due periodically while a thread stays active: after PROMOTE_EVERY, or at once when PROMOTE_EVERY_MESSAGES wait', () => {
    // Active every 2 hours for days: the quiet rule alone would never fire.
    expect(promotionDueAt(activity(hours(30), 'open', 3, hours(10)), cadence(72 * 3_600_000))).toEqual({
      trigger: 'periodic',
      at: hours(34),
    });
    expect(promotionDueAt(activity(hours(30), 'open', 10, hours(25)), cadence(72 * 3_600_000))).toEqual({
      trigger: 'periodic',
      at: hours(30),
    });
    // Quiet comes first when the quiet window is shorter than the periodic one.
    expect(promotionDueAt(activity(hours(30), 'open', 3, hours(29)), cadence(2 * 3_600_000))).toEqual({ trigger: 'quiet', at: hours(32) });
    // Nothing waiting: only the quiet rule.
    expect(promotionDueAt(activity(hours(30), 'open', 0, null), cadence(72 * 3_600_000))).toEqual({ trigger: 'quiet', at: hours(102) });
  });
});
