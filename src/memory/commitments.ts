/**
 * Commitments as tracked objects: what the support side promised, when it is due (resolved to an
 * absolute date against the promising message's date), and how a promise closes (only with
 * evidence quoted from a later message). Pure: chrono-node parses dates, nothing else is read.
 */
import * as chrono from 'chrono-node';
import { containsFolded, foldText } from './text-fold.ts';

export type CommitmentStatus = 'open' | 'fulfilled' | 'overdue' | 'cancelled';

/** Date parsers tried in order: English first, then the languages of the fixtures chrono knows. */
const PARSERS: ReadonlyArray<{ parse: typeof chrono.en.parse }> = [
  chrono.en,
  chrono.de,
  chrono.fr,
  chrono.es,
  chrono.nl,
  chrono.pt,
  chrono.it,
  chrono.ja,
  chrono.zh,
  chrono.ru,
];

/** "within 3 business days", "innerhalb von 3 Werktagen", "dans les 3 jours ouvrés", "en 3 días hábiles"... */
const BUSINESS_DAYS =
  /\b(\d{1,2})\s*(?:business|working|werk|arbeits|jours? ouvr[ée]s?|d[ií]as? h[áa]biles|d[ií]as? laborables|werkdagen|dias? [úu]teis|giorni lavorativi)\w*/iu;
const DAYS =
  /\b(?:within|in|innerhalb von|binnen|dans les|d'ici|en|dentro de|entro)\s+(\d{1,2})\s*(?:days?|tage?n?|jours?|d[ií]as?|dagen|dias?|giorni)\b/iu;
const MAX_DUE_TEXT = 200;
const DAY = 86_400_000;

function endOfDayUtc(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), 23, 59, 59, 999));
}

function addBusinessDays(from: Date, days: number): Date {
  const date = new Date(from.getTime());
  let left = days;
  while (left > 0) {
    date.setTime(date.getTime() + DAY);
    const weekday = date.getUTCDay();
    if (weekday !== 0 && weekday !== 6) left--;
  }
  return date;
}

/**
 * The absolute due date of a promise: `due` as written ("Friday", "by 15 November", "within 3
 * business days", "2026-12-01") resolved forward from `promisedAt`, at the end of that day (UTC)
 * when no time was given. Null when nothing in it reads as a date.
 */
export function resolveDue(due: string | null | undefined, promisedAt: Date): Date | null {
  const text = due?.slice(0, MAX_DUE_TEXT).trim();
  if (!text) return null;
  const business = BUSINESS_DAYS.exec(text);
  if (business) return endOfDayUtc(addBusinessDays(promisedAt, Number(business[1])));
  const days = DAYS.exec(text);
  if (days) return endOfDayUtc(new Date(promisedAt.getTime() + Number(days[1]) * DAY));
  for (const parser of PARSERS) {
    const [result] = parser.parse(text, { instant: promisedAt, timezone: 'UTC' }, { forwardDate: true });
    if (!result) continue;
    const date = result.start.date();
    if (!Number.isFinite(date.getTime())) continue;
    return result.start.isCertain('hour') ? date : endOfDayUtc(date);
  }
  return null;
}

/** An open commitment past its due date is overdue (a closed one never is). */
export function commitmentStatusAt(commitment: { status: CommitmentStatus; dueAt: Date | null }, now: Date): CommitmentStatus {
  if (commitment.status === 'open' && commitment.dueAt !== null && commitment.dueAt < now) return 'overdue';
  return commitment.status;
}

export interface OpenCommitment {
  id: string;
  text: string;
  /** When the promise was made (its message's date): evidence must come from a later message. */
  promisedAt: Date;
}

/** Which open commitment an update names: its id as shown in the prompt, or its exact text. */
export function findCommitment(reference: string, open: readonly OpenCommitment[]): OpenCommitment | null {
  const ref = reference.trim();
  const byId = open.find((c) => c.id === ref);
  if (byId) return byId;
  const folded = foldText(ref);
  return open.find((c) => foldText(c.text) === folded) ?? null;
}

export type CommitmentCloseVerdict =
  { ok: true } | { ok: false; rule: 'commitment-unknown' | 'evidence-in-source' | 'evidence-before-promise'; reason: string };

/**
 * Whether an update may close a commitment: it names an open one, its evidence occurs in the cited
 * message (compared as the fact evidence is), and that message came after the promise.
 */
export function checkCommitmentClose(
  update: { commitment: string; evidence: string; sourceMessageId: string },
  open: readonly OpenCommitment[],
  source: { text: string; date: Date } | null,
): CommitmentCloseVerdict & { commitment: OpenCommitment | null } {
  const commitment = findCommitment(update.commitment, open);
  if (!commitment)
    return { ok: false, rule: 'commitment-unknown', reason: `no open commitment "${update.commitment.slice(0, 80)}"`, commitment };
  const evidence = foldText(update.evidence);
  if (!source || !evidence || !containsFolded(foldText(source.text), evidence)) {
    return { ok: false, rule: 'evidence-in-source', reason: 'the evidence does not occur in the cited message', commitment };
  }
  if (source.date <= commitment.promisedAt) {
    return { ok: false, rule: 'evidence-before-promise', reason: 'the cited message is not later than the promise', commitment };
  }
  return { ok: true, commitment };
}
