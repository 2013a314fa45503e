/**
 * How a draft ended, decided from what the team actually sent. Pure: the caller gives the draft
 * and the sent message as plain values.
 *
 * A sent message settles a draft in one of two ways:
 * - by Message-ID: the client kept the draft's Message-ID when it sent it (Thunderbird, Apple
 *   Mail, mutt, and most clients that open a draft from the Drafts folder and send it do);
 * - else by In-Reply-To (both answer the same customer message), sent after the draft was made,
 *   and with text close enough (`MATCH_SIMILARITY`). Outlook, Gmail's web client and clients
 *   that "reply" rather than "send the draft" give the sent mail a new Message-ID.
 *
 * What the team sent in the thread that matches no pending draft settles those drafts as
 * `replaced`.
 */
import { foldText } from './text-fold.ts';

export type DraftOutcome = 'pending' | 'sent-as-is' | 'sent-edited' | 'replaced' | 'discarded' | 'superseded';
export const DRAFT_OUTCOMES: readonly DraftOutcome[] = ['pending', 'sent-as-is', 'sent-edited', 'replaced', 'discarded', 'superseded'];

/** Text beyond this many characters is not compared (a long quoted tail changes nothing). */
export const SIMILARITY_MAX_CHARS = 8000;
/** At least this similar counts as sent as it was (line wrapping, a signature's last word). */
export const AS_IS_SIMILARITY = 0.97;
/** Without the draft's Message-ID, a sent reply is the draft edited only when at least this similar. */
export const MATCH_SIMILARITY = 0.3;
/** A mail client's clock (its Date header, to the second) may run behind ours by this much. */
export const CLOCK_SKEW_MS = 5 * 60_000;

/** The word pairs (bigrams) of folded text, counted; a text of one word is that word. */
const LINK_TARGET = /(?:https?:\/\/|mailto:)[^\s<>()[\]]*/gi;

function wordPairs(text: string): Map<string, number> {
  // Link targets are markup: a reply's HTML part shows none, its text part shows them as <url>.
  const words = foldText(text.slice(0, SIMILARITY_MAX_CHARS).replace(LINK_TARGET, ' ')).split(' ').filter(Boolean);
  const pairs = new Map<string, number>();
  const grams = words.length < 2 ? words : words.slice(1).map((w, i) => `${words[i]!} ${w}`);
  for (const gram of grams) pairs.set(gram, (pairs.get(gram) ?? 0) + 1);
  return pairs;
}

/**
 * Similarity of two texts from 0 (nothing shared) to 1 (the same words in the same order): the
 * Dice coefficient of their word-pair multisets, 2·|A∩B| / (|A|+|B|), after folding case, accents
 * and punctuation, link targets (http(s) and mailto URLs) left out. Linear in the (capped) text.
 * Two empty texts are identical.
 */
export function textSimilarity(a: string, b: string): number {
  const pa = wordPairs(a);
  const pb = wordPairs(b);
  let sizeA = 0;
  let sizeB = 0;
  let shared = 0;
  for (const n of pa.values()) sizeA += n;
  for (const [gram, n] of pb) {
    sizeB += n;
    shared += Math.min(n, pa.get(gram) ?? 0);
  }
  if (sizeA + sizeB === 0) return 1;
  return (2 * shared) / (sizeA + sizeB);
}

export interface PendingDraft {
  id: string;
  messageId: string;
  inReplyTo: string | null;
  body: string;
  createdAt: Date;
}

export interface SentReply {
  messageId: string;
  inReplyTo: string | null;
  text: string;
  sentAt: Date;
}

export interface DraftSettlement {
  draftId: string;
  outcome: Extract<DraftOutcome, 'sent-as-is' | 'sent-edited' | 'replaced'>;
  similarity: number | null;
  match: 'message-id' | 'in-reply-to' | null;
}

/**
 * What one sent reply does to the thread's pending drafts: the draft it is (by Message-ID, else the
 * closest draft answering the same message, made before it was sent) becomes sent-as-is or
 * sent-edited; every other pending draft made before it was sent is replaced.
 */
export function settleDrafts(sent: SentReply, pending: readonly PendingDraft[]): DraftSettlement[] {
  const earlier = pending.filter((d) => d.messageId === sent.messageId || d.createdAt.getTime() <= sent.sentAt.getTime() + CLOCK_SKEW_MS);
  let match: { draft: PendingDraft; similarity: number; by: 'message-id' | 'in-reply-to' } | null = null;
  const byId = earlier.find((d) => d.messageId === sent.messageId);
  if (byId) match = { draft: byId, similarity: textSimilarity(byId.body, sent.text), by: 'message-id' };
  else if (sent.inReplyTo) {
    for (const draft of earlier) {
      if (draft.inReplyTo !== sent.inReplyTo) continue;
      const similarity = textSimilarity(draft.body, sent.text);
      if (similarity >= MATCH_SIMILARITY && (!match || similarity > match.similarity)) match = { draft, similarity, by: 'in-reply-to' };
    }
  }
  return earlier.map((draft) =>
    draft === match?.draft
      ? {
          draftId: draft.id,
          outcome: match.similarity >= AS_IS_SIMILARITY ? 'sent-as-is' : 'sent-edited',
          similarity: round(match.similarity),
          match: match.by,
        }
      : { draftId: draft.id, outcome: 'replaced', similarity: null, match: null },
  );
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
