/**
 * Token counting with a real tokenizer (o200k, as used by current OpenAI models). Mail text is
 * counted as plain text: special-token strings like "<|endoftext|>" in a hostile email are
 * ordinary characters here, never an error.
 *
 * Bounded on any input. gpt-tokenizer's byte-pair merge is quadratic in the length of one
 * pre-tokenized piece (a run of letters, marks or punctuation without a space): 40,000 CJK
 * characters in a row took 10 s, 150,000 combining marks on one letter 55 s, and a piece of more
 * than about 100,000 tokens overflowed the stack (`push(...tokens)`). So text is tokenized in
 * segments: cut before whitespace every few thousand characters, and a run without whitespace is
 * cut every `MAX_RUN_CHARS` characters. Counts are exact for ordinary text and may differ by a
 * token at such a cut; `countTokens` counts the first `EXACT_COUNT_CHARS` characters and
 * estimates the rest from them.
 */
import { countTokens as count, decode, encode } from 'gpt-tokenizer';

const PLAIN = { disallowedSpecial: new Set<string>() };

/** A segment ends before the first space between two words after this many characters. */
const SEGMENT_CHARS = 2_000;
/** A run of characters without whitespace is cut into pieces of this many characters. */
export const MAX_RUN_CHARS = 400;
/** Characters per token assumed when looking for a suffix; far more than any o200k token has. */
const TAIL_CHARS_PER_TOKEN = 256;
/** `countTokens` counts this many characters exactly and extrapolates beyond them. */
export const EXACT_COUNT_CHARS = 200_000;

/** The token count of `text` (exact up to `EXACT_COUNT_CHARS` characters, estimated beyond). */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  const end = Math.min(text.length, EXACT_COUNT_CHARS);
  let tokens = 0;
  let counted = 0;
  for (const [start, stop] of segments(text, 0, end)) {
    tokens += count(text.slice(start, stop), PLAIN);
    counted = stop;
  }
  if (counted >= text.length) return tokens;
  // Estimated from the counted part's ratio, and never below one token per four characters.
  const ratio = Math.max(tokens / Math.max(1, counted), 0.25);
  return tokens + Math.ceil((text.length - counted) * ratio);
}

/** The longest prefix of `text` within `maxTokens`, marked with an ellipsis when cut. */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  // Cheap exits: a token is at least one character, so short text always fits.
  if (text.length <= maxTokens) return text;
  const keep = maxTokens - 1; // one token is left for the ellipsis
  let kept: number[] = [];
  for (const [start, stop] of segments(text, 0, text.length)) {
    const tokens = encode(text.slice(start, stop), PLAIN);
    const total = kept.length + tokens.length;
    if (total > maxTokens || (total === maxTokens && stop < text.length)) {
      kept = kept.concat(tokens.slice(0, keep - kept.length));
      return decode(kept).trimEnd() + ' …';
    }
    kept = kept.concat(tokens);
  }
  return text;
}

/** The longest suffix of `text` within `maxTokens` (keeps the most recent part of a summary). */
export function truncateToTokensFromEnd(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  if (text.length <= maxTokens) return text;
  const keep = maxTokens - 1;
  // No token is anywhere near this long, so the suffix lies in this window.
  const from = Math.max(0, text.length - (maxTokens + 1) * TAIL_CHARS_PER_TOKEN);
  const ranges = [...segments(text, from, text.length)];
  let tail: number[] = [];
  for (let i = ranges.length - 1; i >= 0; i--) {
    const [start, stop] = ranges[i]!;
    const tokens = encode(text.slice(start, stop), PLAIN);
    const total = tail.length + tokens.length;
    if (total > maxTokens || (total === maxTokens && start > 0)) {
      tail = tokens.slice(tokens.length - (keep - tail.length)).concat(tail);
      return '… ' + decode(tail).trimStart();
    }
    tail = tokens.concat(tail);
  }
  return from === 0 ? text : '… ' + decode(tail.slice(tail.length - keep)).trimStart();
}

/**
 * [start, end) ranges covering text[from, to) in order: each ends before whitespace once it is
 * `SEGMENT_CHARS` long, and no range holds a run of more than `MAX_RUN_CHARS` non-whitespace
 * characters. A surrogate pair is never split.
 */
export function* segments(text: string, from: number, to: number): Generator<[number, number]> {
  let start = from;
  let run = 0; // characters since the last whitespace
  let blank = 0; // whitespace characters in a row
  for (let i = from; i < to; i++) {
    const code = text.charCodeAt(i);
    if (isWhitespace(code)) {
      // Cut before a lone space between two words: the tokenizer starts a new piece there anyway,
      // so the count does not change. Text without such spaces is cut at any whitespace, later; a
      // long run of whitespace is cut like any other run.
      const length = i - start;
      const loneSpace = code === 0x20 && run > 0 && i + 1 < to && !isWhitespace(text.charCodeAt(i + 1));
      if ((length >= SEGMENT_CHARS && loneSpace) || length >= 4 * SEGMENT_CHARS || blank >= MAX_RUN_CHARS) {
        yield [start, i];
        start = i;
        blank = 0;
      }
      run = 0;
      blank += 1;
      continue;
    }
    blank = 0;
    if (run >= MAX_RUN_CHARS && !(code >= 0xdc00 && code <= 0xdfff)) {
      yield [start, i];
      start = i;
      run = 0;
    }
    run += 1;
  }
  if (start < to) yield [start, to];
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x3000 || code === 0x2028 || code === 0x2029;
}
