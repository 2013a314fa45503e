/**
 * Folding text for comparison: the promotion policy (is this value in the evidence?) and the
 * reply guard (is this a promise?) compare what a model wrote with what a customer wrote, and
 * neither may be fooled by case, full-width forms, accents, zero-width characters or punctuation.
 * Pure, linear in the input.
 */
import { stripInvisibleChars } from '../mail/html-text.ts';

// Scripts written without spaces between words: containment there is by characters, not words.
// U+30FC (the katakana long-vowel mark) is Script=Common but only ever written inside such words.
const UNSPACED_CLASS = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Thai}\\u30fc';
const UNSPACED = new RegExp(`[${UNSPACED_CLASS}]`, 'u');
// A Latin word or a number written against Chinese/Japanese text ("订单号是CN2024") is its own word.
const INTO_UNSPACED = new RegExp(`([^${UNSPACED_CLASS}\\s])(?=[${UNSPACED_CLASS}])`, 'gu');
const OUT_OF_UNSPACED = new RegExp(`([${UNSPACED_CLASS}])(?=[^${UNSPACED_CLASS}\\s])`, 'gu');

// Latin look-alikes from Cyrillic and Greek, used only inside words that also have Latin letters
// ("rеfund" or "VІP" with a Cyrillic letter); words wholly in Cyrillic or Greek are left alone.
const CONFUSABLES: Record<string, string> = {
  а: 'a',
  в: 'b',
  е: 'e',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  і: 'i',
  ј: 'j',
  ѕ: 's',
  ԁ: 'd',
  ɡ: 'g',
  α: 'a',
  β: 'b',
  ε: 'e',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
};
const LOOKALIKE = /[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f\u0261]/u;

/** Maps Cyrillic/Greek look-alike letters to Latin inside words that mix them with Latin letters. */
export function unconfuse(text: string): string {
  return text.replace(/\S+/g, (word) =>
    /[a-z]/i.test(word) && LOOKALIKE.test(word) ? [...word].map((c) => CONFUSABLES[c.toLowerCase()] ?? c).join('') : word,
  );
}

/**
 * NFKC (full-width digits and letters become ASCII), invisible characters removed, Latin accents
 * removed ("Rückerstattung" → "ruckerstattung"; kana voicing marks are kept), look-alike letters in
 * mixed-script words made Latin, lower case, Chinese and
 * Japanese text set apart from Latin words and numbers by a space, every run of characters that is
 * neither a letter nor a digit becomes one space.
 */
export function foldText(text: string): string {
  return unconfuse(stripInvisibleChars(text.normalize('NFKC')))
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .normalize('NFC')
    .toLowerCase()
    .replace(INTO_UNSPACED, '$1 ')
    .replace(OUT_OF_UNSPACED, '$1 ')
    .replace(/[^\p{L}\p{N}\p{M}]+/gu, ' ')
    .trim();
}

/** Whether the text has characters of a script written without spaces (Chinese, Japanese, Thai). */
export function hasUnspacedScript(text: string): boolean {
  return UNSPACED.test(text);
}

/**
 * Whether folded `needle` occurs in folded `haystack` as whole words ("bob" is not in "bobby"); a
 * needle with Chinese/Japanese characters is compared with all spaces removed ("佐藤 健二" in
 * "佐藤健二").
 */
export function containsFolded(haystack: string, needle: string): boolean {
  if (!needle) return false;
  if (` ${haystack} `.includes(` ${needle} `)) return true;
  return hasUnspacedScript(needle) && haystack.replace(/ /g, '').includes(needle.replace(/ /g, ''));
}

/**
 * Whether a folded vocabulary term occurs in folded text. Terms are whole words; a term ending in
 * `*` is a word prefix ("refund*" matches "refunded"); a term in Chinese/Japanese is a substring.
 */
function hasTerm(folded: string, term: string): boolean {
  const stem = term.endsWith('*');
  const body = foldedTerm(stem ? term.slice(0, -1) : term);
  if (!body) return false;
  if (hasUnspacedScript(body)) return folded.replace(/ /g, '').includes(body.replace(/ /g, ''));
  const padded = ` ${folded} `;
  if (!stem) return padded.includes(` ${body} `);
  return padded.includes(` ${body}`);
}

// Vocabulary terms come from the policy file and the guard's lists: a few hundred, folded once.
const foldedTerms = new Map<string, string>();
/** foldText for vocabulary terms, remembered (bounded). */
export function foldedTerm(term: string): string {
  let folded = foldedTerms.get(term);
  if (folded === undefined) {
    folded = foldText(term);
    if (foldedTerms.size < 10_000) foldedTerms.set(term, folded);
  }
  return folded;
}

/** The first term of `terms` found in folded text, or null. */
export function firstTerm(folded: string, terms: readonly string[]): string | null {
  return terms.find((term) => hasTerm(folded, term)) ?? null;
}
