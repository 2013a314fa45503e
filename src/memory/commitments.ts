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
  | { ok: true }
  | {
      ok: false;
      rule: 'commitment-unknown' | 'evidence-in-source' | 'source-unverified' | 'evidence-unrelated' | 'evidence-before-promise';
      reason: string;
    };

/**
 * A message a closing may cite. `proven`: the customer's own message, or the team's reply through
 * a channel that proves it (src/mail/team-identity.ts: the Sent folder, an aligned DMARC pass, the
 * agent's own outbox once sent). A draft still waiting for a person has said nothing yet.
 */
export interface CommitmentSource {
  text: string;
  date: Date;
  proven: boolean;
}

/** Shortest content word compared, and the prefix two words must share (inflections: refund/refunded). */
const CONTENT_WORD = 4;
const SHARED_PREFIX = 5;
/** Words compared on each side (bounded work on a model's long evidence). */
const MAX_WORDS = 200;

const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;

function contentWords(text: string): string[] {
  return (foldText(text).match(/[\p{L}\p{N}]+/gu) ?? []).filter(
    (w) => w.length >= CONTENT_WORD || /^\p{N}+$/u.test(w) || (w.length >= 2 && UNSPACED.test(w)),
  );
}

/** Two runs of unspaced script share two consecutive characters ("退款" in "退款已到账"). */
function sharesPair(a: string, b: string): boolean {
  const pairs = new Set<string>();
  for (let i = 0; i + 1 < a.length; i++) pairs.add(a.slice(i, i + 2));
  for (let i = 0; i + 1 < b.length; i++) if (pairs.has(b.slice(i, i + 2))) return true;
  return false;
}

function sameWord(p: string, w: string): boolean {
  if (p === w) return true;
  if (UNSPACED.test(p) || UNSPACED.test(w)) return UNSPACED.test(p) && UNSPACED.test(w) && sharesPair(p, w);
  return p.length >= SHARED_PREFIX && w.length >= SHARED_PREFIX && p.slice(0, SHARED_PREFIX) === w.slice(0, SHARED_PREFIX);
}

/**
 * Whether the evidence is about the commitment: they share a content word (four letters or more,
 * compared by its first five so "refund" meets "refunded"; or a number; in Chinese, Japanese and
 * Thai, two consecutive characters). "Thanks!" closes nothing.
 */
export function evidenceSupports(commitmentText: string, evidence: string): boolean {
  const promised = contentWords(commitmentText).slice(0, MAX_WORDS);
  const said = contentWords(evidence).slice(0, MAX_WORDS);
  return promised.some((p) => said.some((w) => sameWord(p, w)));
}

/**
 * Whether an update may close a commitment: it names an open one, its evidence occurs in the cited
 * message, that message is proven (the customer's, or the team's through a proving channel), the
 * evidence is about the commitment, and the message came after the promise.
 */
export function checkCommitmentClose(
  update: { commitment: string; evidence: string; sourceMessageId: string },
  open: readonly OpenCommitment[],
  source: CommitmentSource | null,
): CommitmentCloseVerdict & { commitment: OpenCommitment | null } {
  const commitment = findCommitment(update.commitment, open);
  if (!commitment)
    return { ok: false, rule: 'commitment-unknown', reason: `no open commitment "${update.commitment.slice(0, 80)}"`, commitment };
  const evidence = foldText(update.evidence);
  if (!source || !evidence || !containsFolded(foldText(source.text), evidence)) {
    return { ok: false, rule: 'evidence-in-source', reason: 'the evidence does not occur in the cited message', commitment };
  }
  if (!source.proven) {
    return { ok: false, rule: 'source-unverified', reason: 'the cited message is not a proven team reply nor the customer’s', commitment };
  }
  if (!evidenceSupports(commitment.text, update.evidence)) {
    return { ok: false, rule: 'evidence-unrelated', reason: 'the evidence shares no content word with the commitment', commitment };
  }
  if (source.date <= commitment.promisedAt) {
    return { ok: false, rule: 'evidence-before-promise', reason: 'the cited message is not later than the promise', commitment };
  }
  return { ok: true, commitment };
}
