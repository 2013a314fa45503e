/**
 * How good the drafts are, from what happened to them (`support-agent stats`, the console's
 * Quality page): drafts by outcome, how many went out as drafted, how much people changed the
 * ones they edited, how often the agent asked for a person, how fast it drafted, threads resolved,
 * what the promotion policy decided; per intent and per tag. Plain records out.
 */
import { z } from 'zod';
import { DRAFT_OUTCOMES, type DraftOutcome } from '../memory/draft-outcome.ts';
import type { DbClient } from './client.ts';

export interface OutcomeCounts {
  drafts: number;
  byOutcome: Record<DraftOutcome, number>;
  /** sent-as-is among the drafts someone decided on (sent as is, edited, replaced, discarded); null when none. */
  approvalAsIsRate: number | null;
  /** Mean similarity of sent-edited drafts to what was sent; null when none. */
  meanEditedSimilarity: number | null;
  needsHumanRate: number | null;
}

export interface QualityStats extends OutcomeCounts {
  since: Date;
  /** The end of the period (unbounded when null). */
  until: Date | null;
  /** Median seconds from the (first) customer mail a turn answered to its draft; null when no drafts. */
  medianSecondsToDraft: number | null;
  threadsResolved: number;
  promotionDecisions: Array<{ verdict: 'accepted' | 'rejected'; rule: string; count: number }>;
  perIntent: Array<OutcomeCounts & { intent: string }>;
  perTag: Array<OutcomeCounts & { tag: string }>;
}

const groupRow = z.object({
  key: z.string().nullable(),
  outcome: z.string(),
  needs_human: z.boolean(),
  n: z.coerce.number(),
  similarity: z.coerce.number().nullable(),
});
type GroupRow = z.infer<typeof groupRow>;

const DECIDED: readonly DraftOutcome[] = ['sent-as-is', 'sent-edited', 'replaced', 'discarded'];

function summarise(rows: readonly GroupRow[]): OutcomeCounts {
  const byOutcome = Object.fromEntries(DRAFT_OUTCOMES.map((o) => [o, 0])) as Record<DraftOutcome, number>;
  let drafts = 0;
  let needsHuman = 0;
  let similaritySum = 0;
  for (const r of rows) {
    drafts += r.n;
    if (r.needs_human) needsHuman += r.n;
    if (r.outcome in byOutcome) byOutcome[r.outcome as DraftOutcome] += r.n;
    if (r.outcome === 'sent-edited') similaritySum += (r.similarity ?? 0) * r.n;
  }
  const decided = DECIDED.reduce((sum, o) => sum + byOutcome[o], 0);
  const edited = byOutcome['sent-edited'];
  return {
    drafts,
    byOutcome,
    approvalAsIsRate: decided === 0 ? null : round(byOutcome['sent-as-is'] / decided),
    meanEditedSimilarity: edited === 0 ? null : round(similaritySum / edited),
    needsHumanRate: drafts === 0 ? null : round(needsHuman / drafts),
  };
}

function grouped(rows: readonly GroupRow[]): Map<string, GroupRow[]> {
  const groups = new Map<string, GroupRow[]>();
  for (const r of rows) {
    const key = r.key || '(none)';
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return groups;
}

/**
 * The date of the mail a draft answers (the newest customer message of its turn; the draft's own
 * date when its turn kept none): a replayed history is counted in its own period, not replay day.
 */
const DRAFT_MAIL_DATES = `SELECT d0."id", coalesce(max(coalesce(m0."sentAt", m0."receivedAt")), d0."createdAt") AS mail_at
  FROM "Draft" d0 LEFT JOIN "Message" m0 ON m0."turnId" = d0."turnId" AND m0."direction" = 'inbound' GROUP BY d0."id", d0."createdAt"`;
// One grouped join (hash joins, no per-draft lookup), then a semi-join on the drafts in the period.
const IN_PERIOD = `d."id" IN (SELECT x0."id" FROM (${DRAFT_MAIL_DATES}) x0
  WHERE x0.mail_at >= $1::timestamp AND ($2::timestamp IS NULL OR x0.mail_at <= $2::timestamp))`;

/** The period `ms` long that ends at `now`, or at the newest answered mail's date when that is earlier (a replayed history). */
export function statsPeriod(ms: number, now: Date, newestMail: Date | null): { since: Date; until: Date } {
  const until = newestMail && newestMail.getTime() < now.getTime() ? newestMail : now;
  return { since: new Date(until.getTime() - ms), until };
}

/** The date of the newest customer mail a draft answers (null without drafts). */
export async function newestAnsweredMailDate(db: DbClient): Promise<Date | null> {
  const rows = await db.$queryRawUnsafe<unknown[]>(`SELECT max(x0.mail_at) AS at FROM (${DRAFT_MAIL_DATES}) x0`);
  return z.object({ at: z.coerce.date().nullable() }).parse(rows[0] ?? { at: null }).at;
}

// Sums per group; the similarity is the group's mean (weighted back up by `summarise`).
const GROUP = `d."outcome", d."needsHuman" AS needs_human, count(*)::int AS n, avg(d."outcomeSimilarity")::float8 AS similarity`;

/**
 * The figures for drafts answering mail dated from `since` to `until` (threads resolved and
 * decisions made in that period, by their own dates).
 */
export async function loadQualityStats(db: DbClient, since: Date, until: Date | null = null): Promise<QualityStats> {
  const iso = since.toISOString();
  const end = until?.toISOString() ?? null;
  const [all, intents, tags, times, resolved, decisions] = await Promise.all([
    db.$queryRawUnsafe<unknown[]>(
      `SELECT NULL AS key, ${GROUP} FROM "Draft" d WHERE ${IN_PERIOD} GROUP BY d."outcome", d."needsHuman"`,
      iso,
      end,
    ),
    db.$queryRawUnsafe<unknown[]>(
      `SELECT t."currentIntent" AS key, ${GROUP} FROM "Draft" d JOIN "Thread" t ON t."id" = d."threadId"
       WHERE ${IN_PERIOD} GROUP BY t."currentIntent", d."outcome", d."needsHuman"`,
      iso,
      end,
    ),
    db.$queryRawUnsafe<unknown[]>(
      `SELECT tag.v AS key, ${GROUP} FROM "Draft" d JOIN "Thread" t ON t."id" = d."threadId"
       CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(t."tags") = 'array' THEN t."tags" ELSE '[]'::jsonb END) AS tag(v)
       WHERE ${IN_PERIOD} GROUP BY tag.v, d."outcome", d."needsHuman"`,
      iso,
      end,
    ),
    db.$queryRawUnsafe<unknown[]>(
      `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x.seconds)::float8 AS median FROM (
         SELECT extract(epoch FROM d."createdAt" - min(coalesce(m."sentAt", m."receivedAt")))::float8 AS seconds
         FROM "Draft" d JOIN "Message" m ON m."turnId" = d."turnId" AND m."direction" = 'inbound'
         WHERE ${IN_PERIOD} GROUP BY d."id", d."createdAt") x`,
      iso,
      end,
    ),
    db.thread.count({ where: { status: { in: ['resolved', 'closed'] }, closedAt: { gte: since, ...(until ? { lte: until } : {}) } } }),
    db.$queryRawUnsafe<unknown[]>(
      `SELECT "accepted", "rule", count(*)::int AS n FROM "PromotionDecision" WHERE "createdAt" >= $1::timestamp AND ($2::timestamp IS NULL OR "createdAt" <= $2::timestamp)
       GROUP BY "accepted", "rule" ORDER BY "accepted" DESC, n DESC, "rule"`,
      iso,
      end,
    ),
  ]);
  const parse = (rows: unknown[]) => rows.map((r) => groupRow.parse(r));
  const median = z.object({ median: z.coerce.number().nullable() }).parse(times[0] ?? { median: null }).median;
  return {
    since,
    until,
    ...summarise(parse(all)),
    medianSecondsToDraft: median === null ? null : Math.round(median),
    threadsResolved: resolved,
    promotionDecisions: decisions.map((r) => {
      const row = z.object({ accepted: z.boolean(), rule: z.string(), n: z.coerce.number() }).parse(r);
      return { verdict: row.accepted ? ('accepted' as const) : ('rejected' as const), rule: row.rule, count: row.n };
    }),
    perIntent: [...grouped(parse(intents))].map(([intent, rows]) => ({ intent, ...summarise(rows) })).sort((a, b) => b.drafts - a.drafts),
    perTag: [...grouped(parse(tags))].map(([tag, rows]) => ({ tag, ...summarise(rows) })).sort((a, b) => b.drafts - a.drafts),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
