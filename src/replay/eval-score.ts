/**
 * Scores of one agent draft against the team's real reply to the same customer mail, and the
 * summary over a whole evaluation. Pure: plain values in, numbers out.
 */
import { textSimilarity } from '../memory/draft-outcome.ts';
import { containsFolded, foldText } from '../memory/text-fold.ts';

export interface PairInput {
  draft: string;
  teamReply: string;
  /** The context the model was given for the draft (the turn's whole prompt). */
  context: string;
  /** The values of the facts the customer's profile held when the draft was made. */
  profileValues: readonly string[];
  agentNeedsHuman: boolean;
  /** Whether the team says this mail needed a person (the history's `X-Needs-Human` label); null: unlabelled. */
  teamNeedsHuman: boolean | null;
  promptTokens: number;
  completionTokens: number;
  modelCalls: number;
}

export interface PairScore {
  similarity: number;
  /** Identifiers and numbers in the draft (words with a digit), and those not found in its context. */
  identifiers: string[];
  ungrounded: string[];
  /** Every identifier and number of the draft appears in its context. */
  grounded: boolean;
  factsHeld: number;
  /** Profile facts whose value the draft uses. */
  factsUsed: number;
  /** Null when the history does not say whether a person was needed. */
  needsHumanAgrees: boolean | null;
  promptTokens: number;
  completionTokens: number;
  modelCalls: number;
}

/** At most this many characters of a draft are searched for identifiers. */
const MAX_DRAFT_CHARS = 8000;

/**
 * Identifiers and numbers: the draft's whitespace-separated words that hold a digit, without the
 * punctuation around them (order numbers, amounts, dates, phone numbers: "A-1234", "49.90",
 * "15/11"). Linear: one split, no backtracking.
 */
export function draftIdentifiers(draft: string): string[] {
  const words = draft.slice(0, MAX_DRAFT_CHARS).split(/\s+/).map(trimPunctuation);
  return [...new Set(words.filter((w) => /\p{N}/u.test(w)))];
}

const ALNUM = /[\p{L}\p{N}]/u;

function trimPunctuation(word: string): string {
  const chars = [...word];
  let start = 0;
  let end = chars.length;
  while (start < end && !ALNUM.test(chars[start]!)) start++;
  while (end > start && !ALNUM.test(chars[end - 1]!)) end--;
  return chars.slice(start, end).join('');
}

export function scorePair(input: PairInput): PairScore {
  const identifiers = draftIdentifiers(input.draft);
  const context = foldText(input.context);
  const ungrounded = identifiers.filter((id) => !containsFolded(context, foldText(id)));
  const draft = foldText(input.draft.slice(0, MAX_DRAFT_CHARS));
  return {
    similarity: round(textSimilarity(input.draft, input.teamReply)),
    identifiers,
    ungrounded,
    grounded: ungrounded.length === 0,
    factsHeld: input.profileValues.length,
    factsUsed: input.profileValues.filter((v) => containsFolded(draft, foldText(v))).length,
    needsHumanAgrees: input.teamNeedsHuman === null ? null : input.teamNeedsHuman === input.agentNeedsHuman,
    promptTokens: input.promptTokens,
    completionTokens: input.completionTokens,
    modelCalls: input.modelCalls,
  };
}

export interface EvalSummary {
  pairs: number;
  meanSimilarity: number | null;
  medianSimilarity: number | null;
  /** Share of drafts whose every identifier and number was in their context. */
  groundedRate: number | null;
  /** Share of the held profile facts that drafts used (over drafts whose customer had facts). */
  factsUsedRate: number | null;
  /** Share of labelled pairs where the agent's needs-human flag matched the label. */
  needsHumanAgreement: number | null;
  meanPromptTokens: number | null;
  meanCompletionTokens: number | null;
  modelCallsPerTurn: number | null;
}

export function summarise(scores: readonly PairScore[]): EvalSummary {
  const n = scores.length;
  const mean = (values: readonly number[]) => (values.length === 0 ? null : round(values.reduce((a, b) => a + b, 0) / values.length));
  const similarities = scores.map((s) => s.similarity).sort((a, b) => a - b);
  const mid = Math.floor(n / 2);
  const labelled = scores.filter((s) => s.needsHumanAgrees !== null);
  const held = scores.reduce((sum, s) => sum + s.factsHeld, 0);
  return {
    pairs: n,
    meanSimilarity: mean(similarities),
    medianSimilarity: n === 0 ? null : round(n % 2 === 1 ? similarities[mid]! : (similarities[mid - 1]! + similarities[mid]!) / 2),
    groundedRate: n === 0 ? null : round(scores.filter((s) => s.grounded).length / n),
    factsUsedRate: held === 0 ? null : round(scores.reduce((sum, s) => sum + s.factsUsed, 0) / held),
    needsHumanAgreement: labelled.length === 0 ? null : round(labelled.filter((s) => s.needsHumanAgrees).length / labelled.length),
    meanPromptTokens: mean(scores.map((s) => s.promptTokens)),
    meanCompletionTokens: mean(scores.map((s) => s.completionTokens)),
    modelCallsPerTurn: mean(scores.map((s) => s.modelCalls)),
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
