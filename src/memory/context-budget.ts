/**
 * The prompt's token budget split into one share per part (issue 25): every part of a reply
 * turn's context has a written share of `PROMPT_TOKEN_BUDGET` and is trimmed by its own rule when
 * it is over it, so the whole prompt stays within the budget by construction and cannot grow
 * with the thread. The table is documented in docs/performance.md ("The context's shares"). Pure.
 */
import { countTokens, truncateToTokens } from './tokens.ts';

/** The parts of a reply turn's prompt, in the order the prompt holds them (instructions are the system prompt). */
export const CONTEXT_PARTS = [
  'instructions',
  'profile',
  'recall',
  'notes',
  'pinned',
  'buffer',
  'knowledge',
  'attachments',
  'newMail',
] as const;
export type ContextPart = (typeof CONTEXT_PARTS)[number];

/**
 * Each part's share of the budget, in thousandths; together exactly 1000. A part with its own
 * setting (SUMMARY_TOKEN_CAP inside the notes, BUFFER_TOKEN_CAP, KB_TOKEN_CAP,
 * ATTACHMENT_TOKEN_CAP, MESSAGE_TOKEN_CAP) gets the smaller of the two.
 */
export const CONTEXT_SHARES: Readonly<Record<ContextPart, number>> = {
  /** The rules (system prompt): about 460–560 tokens with the defaults; the tag vocabulary is cut when over. */
  instructions: 150,
  /** The rendered profile: past threads and the least relevant facts leave when over. */
  profile: 100,
  /** Case records recalled from other threads (the customer's earlier cases): reserved, nothing fills it yet. */
  recall: 110,
  /** Subject, summary (at most SUMMARY_TOKEN_CAP), open items and intent. */
  notes: 65,
  /** The pinned identifiers, each cut to an equal part of the share when they are over it. */
  pinned: 35,
  /** The rolling buffer of the latest exchanges (BUFFER_TOKEN_CAP at most). */
  buffer: 55,
  /** Knowledge passages (KB_TOKEN_CAP at most). */
  knowledge: 155,
  /** This turn's attachments' text (ATTACHMENT_TOKEN_CAP at most). */
  attachments: 40,
  /** The email being answered (MESSAGE_TOKEN_CAP at most) and a burst's earlier emails. */
  newMail: 290,
};

export type PartTokens = Record<ContextPart, number>;

/** The caps the settings put on parts (their own settings), beside the budget. */
export interface PartCaps {
  promptTokenBudget: number;
  summaryTokenCap: number;
  messageTokenCap: number;
  bufferTokenCap: number;
  attachmentTokenCap?: number;
  knowledgeTokenCap: number;
}

/** Every part's share in tokens for this budget and these settings. */
export function contextShares(caps: PartCaps): PartTokens {
  const of = (part: ContextPart) => Math.floor((caps.promptTokenBudget * CONTEXT_SHARES[part]) / 1000);
  return {
    instructions: of('instructions'),
    profile: of('profile'),
    recall: of('recall'),
    notes: of('notes'),
    pinned: of('pinned'),
    buffer: Math.min(caps.bufferTokenCap, of('buffer')),
    knowledge: Math.min(caps.knowledgeTokenCap, of('knowledge')),
    attachments: Math.min(caps.attachmentTokenCap ?? 0, of('attachments')),
    newMail: of('newMail'),
  };
}

/** Tokens of the lines around the notes' variable text (labels, "(none)", intent). */
const NOTES_FRAME_TOKENS = 40;
const OPEN_ITEM_TOKENS = 40;
const MIN_OPEN_ITEM_TOKENS = 6;

/**
 * The notes under their share: the summary keeps its most recent part, at most SUMMARY_TOKEN_CAP
 * and at most two thirds of the share; open items (each cut to 40 tokens) fill what is left, in
 * their order, and those that do not fit are left out (the model keeps the full list).
 */
export function fitNotes(
  notes: { subject: string; summary: string; openItems: readonly string[]; currentIntent: string },
  share: number,
  summaryTokenCap: number,
): { summaryTokens: number; openItems: string[] } {
  const room = Math.max(0, share - NOTES_FRAME_TOKENS - Math.min(countTokens(notes.subject), 60) - countTokens(notes.currentIntent));
  const summaryTokens = Math.min(summaryTokenCap, Math.floor((room * 2) / 3), countTokens(notes.summary));
  let left = room - summaryTokens;
  const openItems: string[] = [];
  for (const item of notes.openItems) {
    const text = truncateToTokens(item, OPEN_ITEM_TOKENS);
    const cost = countTokens(text) + 2;
    if (cost > left || cost < MIN_OPEN_ITEM_TOKENS - 4) break;
    openItems.push(text);
    left -= cost;
  }
  return { summaryTokens, openItems };
}

/** Tokens of the pinned heading line. */
const PINNED_FRAME_TOKENS = 10;

/**
 * The pinned items under their share: all of them stay (the model relies on every one), each cut
 * to an equal part of the share when together they are over it. Identifiers are short, so in
 * practice only a long free-text pin is ever cut.
 */
export function fitPinned(items: readonly string[], share: number): string[] {
  const cost = (list: readonly string[]) => list.reduce((sum, p) => sum + countTokens(p) + 2, PINNED_FRAME_TOKENS);
  if (items.length === 0 || cost(items) <= share) return [...items];
  const each = Math.max(4, Math.floor((share - PINNED_FRAME_TOKENS) / items.length) - 3);
  return items.map((p) => (countTokens(p) <= each ? p : `${truncateToTokens(p, each)}…`));
}
