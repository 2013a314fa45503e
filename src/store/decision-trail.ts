/**
 * The promotion decision trail: every candidate fact and operator change, accepted or rejected,
 * with the rule that decided it. Read by the console's profile page and `support-agent why`.
 */
import type { DbClient } from './client.ts';

export interface DecisionRecord {
  id: string;
  createdAt: Date;
  accepted: boolean;
  key: string;
  value: string;
  category: string;
  confidence: number;
  explicit: boolean;
  rule: string;
  reason: string;
  /** promotion | operator | import | sweep */
  origin: string;
  evidence: string | null;
  sourceMessageId: string | null;
  /** The promotion run that made the decision; null for operator changes and imports. */
  run: { threadId: string; trigger: string } | null;
}

export interface DecisionQuery {
  /** Only decisions about this key (none or empty: every key). */
  key?: string | undefined;
  order: 'newest-first' | 'oldest-first';
  limit?: number;
  /** Only decisions made by then (what `why --as-of` explains). */
  asOf?: Date | undefined;
}

export async function listDecisions(db: DbClient, entityId: string, query: DecisionQuery): Promise<DecisionRecord[]> {
  const direction = query.order === 'newest-first' ? ('desc' as const) : ('asc' as const);
  return db.promotionDecision.findMany({
    where: { entityId, ...(query.key ? { key: query.key } : {}), ...(query.asOf ? { createdAt: { lte: query.asOf } } : {}) },
    orderBy: [{ createdAt: direction }, { id: direction }],
    ...(query.limit === undefined ? {} : { take: query.limit }),
    select: {
      id: true,
      createdAt: true,
      accepted: true,
      key: true,
      value: true,
      category: true,
      confidence: true,
      explicit: true,
      rule: true,
      reason: true,
      origin: true,
      evidence: true,
      sourceMessageId: true,
      run: { select: { threadId: true, trigger: true } },
    },
  });
}
