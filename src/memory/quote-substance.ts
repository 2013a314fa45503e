/**
 * Whether a citation's quote means something (src/memory/grounding.ts): a quote of "to" or "the"
 * occurs in every passage, so finding it there proves nothing. A quote must be a substantive span
 * — at least MIN_QUOTE_CHARS characters with at least MIN_CONTENT_WORDS content words (numbers, or
 * words of three letters or more that are not function words; Chinese/Japanese: at least
 * MIN_CJK_CHARS characters) — unless it is the whole source (a profile fact's short value) or the
 * whole sentence it supports; and it must share a content word (by its first five letters, so
 * "refunds" meets "refund"), a number, or two adjacent Chinese/Japanese characters with the
 * sentence citing it. Pure; linear in the quote and the sentence.
 */
import { foldText } from './text-fold.ts';

export const MIN_QUOTE_CHARS = 12;
export const MIN_CONTENT_WORDS = 2;
const MIN_CJK_CHARS = 4;

// Function words of the reply languages (folded): they carry no claim.
const FUNCTION_WORDS = new Set(
  `the and for are but not you your our with this that from have has had was were will can all any its into than then them they
  their there what when which who how out off per via also just only very may must should would could about over under such
  der die das und ist sind ein eine einer einen dem den des mit von fur auf aus bei nach wie als auch oder wir sie ihr ihre ihnen
  les des une est sont pour par avec dans sur pas que qui vous nous votre vos leur aux ces cette ses son mais ont
  los las una uno del con por para que sus nos usted ustedes como pero esta este son
  het een van met voor zijn niet wij ons uw aan als maar ook bij naar dat die deze
  gli della delle degli con per una che non sono suo sua nel nella alla
  dos das uma com por para que nao sao seu sua nos ao na no`
    .split(/\s+/)
    .filter(Boolean),
);

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

function contentWords(folded: string): string[] {
  return folded.split(' ').filter((w) => /^\d/.test(w) || (w.length >= 3 && !FUNCTION_WORDS.has(w) && !CJK.test(w)));
}

function cjkPairs(folded: string): Set<string> {
  const chars = [...folded.replace(/ /g, '')].filter((c) => CJK.test(c));
  const pairs = new Set<string>();
  for (let i = 0; i + 1 < chars.length; i += 1) pairs.add(`${chars[i]}${chars[i + 1]}`);
  return pairs;
}

/**
 * Why the quote cannot support the sentence (a phrase for a finding's reason), or null when it
 * can. `source` is the cited source's text, `sentence` the citing sentence.
 */
export function quoteWeakness(quote: string, source: string, sentence: string): string | null {
  const q = foldText(quote);
  const s = foldText(sentence);
  const words = contentWords(q);
  const cjkChars = [...q.replace(/ /g, '')].filter((c) => CJK.test(c)).length;
  const whole = q === foldText(source) || q === s;
  const substantive = (q.length >= MIN_QUOTE_CHARS && words.length >= MIN_CONTENT_WORDS) || cjkChars >= MIN_CJK_CHARS;
  if (!whole && !substantive) {
    return `is too slight to support anything (at least ${MIN_CONTENT_WORDS} content words and ${MIN_QUOTE_CHARS} characters)`;
  }
  const stems = new Set(contentWords(s).map((w) => w.slice(0, 5)));
  if (words.some((w) => stems.has(w.slice(0, 5)))) return null;
  const sentencePairs = cjkPairs(s);
  if ([...cjkPairs(q)].some((p) => sentencePairs.has(p))) return null;
  return 'shares no word with the sentence citing it';
}
