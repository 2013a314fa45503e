/**
 * Which profile facts a reply prompt carries, and why each was or was not included: the order
 * facts are kept in when the profile does not fit its share (trusted facts last to go; among
 * email-learnt facts, those sharing a tag with the current thread, then the most recent, then the
 * most confident), and the trace the console shows for a turn. Pure.
 */
import type { ProfileFactView } from './types.ts';

/** One fact's fate in a turn's prompt. */
export interface FactInclusion {
  /** The stored fact's id (null for a fact without one). */
  factId: string | null;
  key: string;
  value: string;
  origin: string;
  /** included: in the prompt; left-out: expired or over the profile's share; withheld: disclosure was withheld. */
  verdict: 'included' | 'left-out' | 'withheld';
  /** One line for a person: "included: shares tag billing", "left out: over the profile share", … */
  reason: string;
}

/** One knowledge passage the prompt held (the console lists them on the draft, cited or not). */
export interface PassageInclusion {
  id: string;
  /** The passage's document title, and its heading path within it, as the prompt named them. */
  title: string;
  titlePath: string;
  /** Its place in the prompt (1 = best match) and the search's score (only the order matters). */
  rank: number;
  score: number;
}

/** What a turn records about its prompt: the thread tags it ordered by, each fact's fate, the knowledge passages it held. */
export interface ContextTrace {
  tags: string[];
  facts: FactInclusion[];
  passages: PassageInclusion[];
  /** Each part's tokens and its share of the budget (src/memory/context-budget.ts); absent on turns before issue 25. */
  parts?: Record<string, { tokens: number; share: number }>;
}

/** The tags of `tags` the current thread also has, in their own order. */
export function sharedTags(tags: readonly string[] | undefined, current: ReadonlySet<string>): string[] {
  return [...new Set(tags ?? [])].filter((t) => current.has(t));
}

const time = (d: Date | null | undefined): number => d?.getTime() ?? Number.NEGATIVE_INFINITY;

/**
 * Facts in the order they are kept when the profile does not fit (the first kept longest):
 * operator and imported facts first, then email-learnt facts by how many tags they share with the
 * current thread, then the most recently stated, then the most confident. Stable otherwise.
 */
export function orderProfileFacts<F extends ProfileFactView>(facts: readonly F[], currentTags: readonly string[]): F[] {
  const current = new Set(currentTags);
  return [...facts].sort(
    (a, b) =>
      Number(b.origin !== 'email') - Number(a.origin !== 'email') ||
      sharedTags(b.tags, current).length - sharedTags(a.tags, current).length ||
      time(b.validFrom) - time(a.validFrom) ||
      b.confidence - a.confidence,
  );
}

export interface TraceInput {
  /** Every fact the profile holds for the turn (expired ones included: they are named as such). */
  facts: readonly ProfileFactView[];
  currentTags: readonly string[];
  now: Date;
  /** How many of the ordered active facts the prompt kept (all of them when nothing was trimmed). */
  kept: number;
  /** Set when disclosure was withheld for this turn: no fact was shown, for this reason. */
  withheldReason: string | null;
}

const ORIGIN_NOTE: Record<string, string> = {
  operator: 'set by an operator',
  import: 'imported',
};

/** Why each fact was or was not in the prompt, in the order the prompt kept them (expired last). */
export function traceProfileFacts(input: TraceInput): FactInclusion[] {
  const current = new Set(input.currentTags);
  const entry = (f: ProfileFactView, verdict: FactInclusion['verdict'], reason: string): FactInclusion => ({
    factId: f.id ?? null,
    key: f.key,
    value: f.value,
    origin: f.origin,
    verdict,
    reason,
  });
  const live = (f: ProfileFactView) => f.expiresAt === null || f.expiresAt > input.now;
  const active = orderProfileFacts(input.facts.filter(live), input.currentTags);
  const expired = input.facts
    .filter((f) => !live(f))
    .map((f) => entry(f, 'left-out', `left out: expired ${f.expiresAt!.toISOString().slice(0, 16).replace('T', ' ')} UTC`));
  if (input.withheldReason !== null) {
    return [...active.map((f) => entry(f, 'withheld', `withheld: ${input.withheldReason}`)), ...expired];
  }
  const trimmed = input.kept < active.length;
  const traced = active.map((f, index) => {
    const shared = sharedTags(f.tags, current);
    const why =
      f.origin !== 'email'
        ? `${ORIGIN_NOTE[f.origin] ?? f.origin}, kept before email-learnt facts`
        : shared.length > 0
          ? `tag overlap ${shared.join(', ')}`
          : current.size > 0
            ? 'no tag shared with this thread'
            : 'this thread has no tags';
    if (index < input.kept) {
      return entry(
        f,
        'included',
        trimmed ? `included: ${why} (ranked ${index + 1} of ${active.length})` : `included: ${why}; the profile fits its share`,
      );
    }
    return entry(f, 'left-out', `left out: over the profile share (${why}; ranked ${index + 1} of ${active.length}, ${input.kept} kept)`);
  });
  return [...traced, ...expired];
}
