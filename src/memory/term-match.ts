/**
 * Finding vocabulary terms in folded text (src/memory/text-fold.ts), as the outbound checks
 * (reply-guard.ts, draft-safety.ts) do: a term is a run of whole words ("credit card number"); a
 * trailing `*` makes its last word a prefix ("refund*" matches "refunded"). Pure; each call is
 * linear in the tokens times the term's words.
 */
import { foldText } from './text-fold.ts';

interface Term {
  words: string[];
  stem: boolean;
}

const termCache = new Map<string, Term>();
function termOf(text: string): Term {
  let term = termCache.get(text);
  if (!term) {
    const stem = text.endsWith('*');
    term = { words: foldText(stem ? text.slice(0, -1) : text).split(' '), stem };
    if (termCache.size < 20_000) termCache.set(text, term);
  }
  return term;
}

/** Start indexes of a term in the token list (the words of a folded text). */
export function positionsOf(tokens: readonly string[], text: string): number[] {
  const term = termOf(text);
  const last = term.words.length - 1;
  const found: number[] = [];
  for (let i = 0; i + last < tokens.length; i += 1) {
    let ok = true;
    for (let j = 0; j <= last && ok; j += 1) {
      const token = tokens[i + j]!;
      ok = j === last && term.stem ? token.startsWith(term.words[j]!) : token === term.words[j];
    }
    if (ok) found.push(i);
  }
  return found;
}

/** How many words a term spans. */
export function termLength(text: string): number {
  return termOf(text).words.length;
}
