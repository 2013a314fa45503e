/**
 * The compact view of profile state that goes into a prompt and `support-agent profile`, in the
 * seed's `profile_state` shape. Pure.
 */
import type { ProfileState } from './types.ts';

export interface ProfileViewLimits {
  maxPastThreads: number;
  maxCommitments: number;
}

export const DEFAULT_PROFILE_VIEW_LIMITS: ProfileViewLimits = { maxPastThreads: 5, maxCommitments: 5 };

/** Facts still valid at `now` (expired facts never reach a prompt, even before the sweep marks them). */
export function activeFacts(profile: ProfileState, now: Date): ProfileState['facts'] {
  return profile.facts.filter((f) => f.expiresAt === null || f.expiresAt > now);
}

export function renderProfileView(
  profile: ProfileState,
  now: Date,
  limits: ProfileViewLimits = DEFAULT_PROFILE_VIEW_LIMITS,
): Record<string, unknown> {
  const view: Record<string, unknown> = { entity_id: profile.entityId };
  if (profile.name) view['name'] = profile.name;
  for (const fact of activeFacts(profile, now)) {
    const existing = view[fact.key];
    if (existing === undefined) view[fact.key] = fact.value;
    else if (Array.isArray(existing)) existing.push(fact.value);
    else if (existing !== fact.value) view[fact.key] = [existing, fact.value];
  }
  view['past_threads'] = [...profile.pastThreads]
    .sort((a, b) => (b.closedAt?.getTime() ?? Infinity) - (a.closedAt?.getTime() ?? Infinity))
    .slice(0, limits.maxPastThreads)
    .map((t) => ({ thread_id: t.threadId, topic: t.topic, closed_at: t.closedAt ? t.closedAt.toISOString().slice(0, 10) : null }));
  view['outstanding_commitments'] = [...profile.outstandingCommitments]
    .sort((a, b) => Number(b.overdue) - Number(a.overdue))
    .slice(0, limits.maxCommitments)
    .map((c) => ({
      text: c.text,
      ...(c.dueAt ? { due: c.dueAt.toISOString().slice(0, 10) } : c.due ? { due: c.due } : {}),
      ...(c.overdue ? { overdue: true } : {}),
    }));
  return view;
}
