/**
 * What linking an address does to two profiles that become one (rule `merged-on-link` of the
 * written policy): for a single-valued key the value an operator set wins, then one an import set, else the
 * one stated most recently (`validFrom`); the others are superseded. For a multi-valued key only
 * repeats of the same value go (the most recent statement stays). Pure.
 */
import { ruleFor, type PromotionPolicy } from './promotion-policy.ts';
import { foldText } from './text-fold.ts';
import type { FactCategory } from './types.ts';

export interface MergeFact {
  id: string;
  key: string;
  value: string;
  category: FactCategory;
  /** email | operator | import */
  origin: string;
  validFrom: Date;
}

export interface MergeRetirement {
  factId: string;
  key: string;
  value: string;
  /** The fact that stays in its place. */
  keptFactId: string;
  reason: string;
}

const trusted = (f: MergeFact) => f.origin === 'operator' || f.origin === 'import';
/** An operator's word before an import's, an import's before an email's. */
const rank = (f: MergeFact) => (f.origin === 'operator' ? 2 : f.origin === 'import' ? 1 : 0);

/** The winner first: operator, then import, then email; then the most recent statement, then the id (stable). */
function byPrecedence(a: MergeFact, b: MergeFact): number {
  return rank(b) - rank(a) || b.validFrom.getTime() - a.validFrom.getTime() || a.id.localeCompare(b.id);
}

/** The facts to supersede after a merge, given the merged profile's active facts. */
export function planLinkMerge(policy: PromotionPolicy, facts: readonly MergeFact[]): MergeRetirement[] {
  const byKey = new Map<string, MergeFact[]>();
  for (const fact of facts) byKey.set(fact.key, [...(byKey.get(fact.key) ?? []), fact]);
  const retirements: MergeRetirement[] = [];
  for (const [key, group] of byKey) {
    if (group.length < 2) continue;
    const ordered = [...group].sort(byPrecedence);
    if (!ruleFor(policy, key, ordered[0]!.category).multiValued) {
      const kept = ordered[0]!;
      const why = trusted(kept)
        ? `the ${kept.origin === 'import' ? 'imported' : "operator's"} value wins`
        : `stated more recently (${kept.validFrom.toISOString().slice(0, 10)})`;
      for (const loser of ordered.slice(1)) {
        retirements.push({
          factId: loser.id,
          key,
          value: loser.value,
          keptFactId: kept.id,
          reason: `two profiles merged on link: kept ${JSON.stringify(kept.value)}, ${why}`,
        });
      }
      continue;
    }
    const seen = new Map<string, MergeFact>();
    for (const fact of ordered) {
      const folded = foldText(fact.value);
      const kept = seen.get(folded);
      if (kept)
        retirements.push({
          factId: fact.id,
          key,
          value: fact.value,
          keptFactId: kept.id,
          reason: 'two profiles merged on link: the same value twice',
        });
      else seen.set(folded, fact);
    }
  }
  return retirements;
}
