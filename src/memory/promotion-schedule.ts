/**
 * When a thread's next promotion pass is due: the quiet rule and the periodic rule, in one place.
 * A resolved thread is due at once. A thread with customer messages no pass has seen yet is due
 * periodically while it stays active -- when PROMOTE_EVERY_MESSAGES of them wait, or when the oldest
 * has waited PROMOTE_EVERY -- so a long thread that never rests still reaches the profile. Any
 * other thread is due when it has been quiet for QUIET_AFTER since its last message (the pass that
 * closes it). Pure.
 */

/**
 * What started a promotion pass: the thread went quiet or was resolved, it stayed active long
 * enough (periodic), the model saw something durable (checkpoint), an operator asked, or a replay
 * ended without settling.
 */
export type PromotionTrigger = 'quiet' | 'resolved' | 'periodic' | 'checkpoint' | 'operator' | 'replay-end';

/** The triggers a scheduler can hold (the others run at once). */
export type ScheduledTrigger = Exclude<PromotionTrigger, 'replay-end'>;

export interface PromotionCadence {
  quietAfterMs: number;
  /** PROMOTE_EVERY: the longest a customer message waits for a pass while the thread is active. */
  everyMs: number;
  /** PROMOTE_EVERY_MESSAGES: a pass as soon as this many customer messages wait. */
  everyMessages: number;
}

export interface ThreadActivity {
  lastMessageAt: Date;
  status: string;
  /** Customer messages no pass has been shown yet, and when the oldest of them was written. */
  uncovered: number;
  oldestUncoveredAt: Date | null;
}

export interface PromotionDue {
  trigger: 'quiet' | 'resolved' | 'periodic';
  at: Date;
}

export function promotionDueAt(thread: ThreadActivity, cadence: PromotionCadence): PromotionDue {
  if (thread.status === 'resolved') return { trigger: 'resolved', at: thread.lastMessageAt };
  const quiet = new Date(thread.lastMessageAt.getTime() + cadence.quietAfterMs);
  if (thread.uncovered >= cadence.everyMessages) return { trigger: 'periodic', at: thread.lastMessageAt };
  if (thread.oldestUncoveredAt !== null) {
    const periodic = new Date(thread.oldestUncoveredAt.getTime() + cadence.everyMs);
    if (periodic < quiet) return { trigger: 'periodic', at: periodic };
  }
  return { trigger: 'quiet', at: quiet };
}

/** Whether a pass with this trigger closes the thread (it went quiet, or the customer settled it). */
export function closesThread(trigger: PromotionTrigger): boolean {
  return trigger === 'quiet' || trigger === 'resolved';
}
