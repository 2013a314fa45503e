/**
 * Token counting with a real tokenizer (o200k, as used by current OpenAI models). Mail text is
 * counted as plain text: special-token strings like "<|endoftext|>" in a hostile email are
 * ordinary characters here, never an error.
 */
import { countTokens as count, decode, encode } from 'gpt-tokenizer';

const PLAIN = { disallowedSpecial: new Set<string>() };

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : count(text, PLAIN);
}

/** The longest prefix of `text` within `maxTokens`, marked with an ellipsis when cut. */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  // Cheap exits: a token is at least one character, so short text always fits.
  if (text.length <= maxTokens) return text;
  const tokens = encode(text, PLAIN);
  if (tokens.length <= maxTokens) return text;
  return decode(tokens.slice(0, Math.max(0, maxTokens - 1))).trimEnd() + ' …';
}

/** The longest suffix of `text` within `maxTokens` (keeps the most recent part of a summary). */
export function truncateToTokensFromEnd(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  if (text.length <= maxTokens) return text;
  const tokens = encode(text, PLAIN);
  if (tokens.length <= maxTokens) return text;
  return '… ' + decode(tokens.slice(tokens.length - Math.max(0, maxTokens - 1))).trimStart();
}
