/**
 * When a thread's promotion into the profile is due: the quiet rule, in one place. A resolved
 * thread is due at once; any other thread when it has been quiet for QUIET_AFTER since its last
 * message. Pure.
 */

/** What started a promotion pass: the thread went quiet or was resolved, an operator asked, or a replay ended. */
export type PromotionTrigger = 'quiet' | 'resolved' | 'manual' | 'replay-end';

export interface PromotionDue {
  trigger: 'quiet' | 'resolved';
  at: Date;
}

export function promotionDueAt(thread: { lastMessageAt: Date; status: string }, quietAfterMs: number): PromotionDue {
  if (thread.status === 'resolved') return { trigger: 'resolved', at: thread.lastMessageAt };
  return { trigger: 'quiet', at: new Date(thread.lastMessageAt.getTime() + quietAfterMs) };
}
