/**
 * Whether a candidate fact's value is supported by its evidence quote, by the value rules the
 * promotion policy names (`valueRules` in config/promotion-policy.json explains each to an
 * operator). Pure; every input is a short string (values ≤ 200, evidence ≤ 500 characters are
 * enforced by the policy before these run) and every scan is a single pass or bounded by that.
 */
import { stripInvisibleChars } from '../mail/html-text.ts';
import { containsFolded, foldText, hasUnspacedScript } from './text-fold.ts';

/** The value rules a key may name in the policy file. */
export const VALUE_RULES = ['contains', 'name', 'phone', 'identifier', 'summary'] as const;
export type ValueRule = (typeof VALUE_RULES)[number];

/** `format`: the value has the wrong shape for its rule; `unsupported`: the evidence does not carry it. */
export type ValueCheck = { ok: true } | { ok: false; failure: 'format' | 'unsupported'; reason: string };

const OK: ValueCheck = { ok: true };
const unsupported = (reason: string): ValueCheck => ({ ok: false, failure: 'unsupported', reason });
const badFormat = (reason: string): ValueCheck => ({ ok: false, failure: 'format', reason });

/** NFKC, invisible and control characters removed, whitespace collapsed: the form a value is stored in. */
export function cleanValue(text: string): string {
  return stripInvisibleChars(text.normalize('NFKC'))
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Checks a value against its evidence under one rule. `summaryMinShare` is for the summary rule. */
export function checkValue(rule: ValueRule, value: string, evidence: string, summaryMinShare: number): ValueCheck {
  switch (rule) {
    case 'contains':
      return containsFolded(foldText(evidence), foldText(value)) ? OK : unsupported('the value does not occur in the evidence');
    case 'name':
      return checkName(value, evidence);
    case 'phone':
      return checkPhone(value, evidence);
    case 'identifier':
      return checkIdentifier(value, evidence);
    case 'summary':
      return checkSummary(value, evidence, summaryMinShare);
  }
}

const NAME_SHAPE = /^[\p{L}\p{M}][\p{L}\p{M} .'’-]*$/u;

function checkName(value: string, evidence: string): ValueCheck {
  const clean = cleanValue(value);
  if (clean.length > 80 || !NAME_SHAPE.test(clean) || clean.split(' ').length > 5) {
    return badFormat('a name is letters, spaces, apostrophes, dots and hyphens, at most 5 words');
  }
  return containsFolded(foldText(evidence), foldText(clean)) ? OK : unsupported('the name does not occur in the evidence');
}

const PHONE_SHAPE = /^\+?[\d ()./-]+$/;

function checkPhone(value: string, evidence: string): ValueCheck {
  const clean = cleanValue(value);
  const digits = clean.replace(/\D/g, '');
  if (!PHONE_SHAPE.test(clean) || digits.length < 6 || digits.length > 15) {
    return badFormat('a phone number is 6-15 digits with + ( ) . / - and spaces only');
  }
  const international = clean.startsWith('+') || digits.startsWith('00');
  const runs = phoneRuns(cleanValue(evidence));
  return runs.some((run) => samePhone(digits, international, run))
    ? OK
    : unsupported(`no phone number in the evidence has the digits ${digits}`);
}

/** Digit runs of the text that look like phone numbers: digits joined by spaces and + ( ) . / -. */
function phoneRuns(text: string): string[] {
  const runs: string[] = [];
  let current = '';
  let pendingSeparators = 0;
  for (const char of text) {
    if (char >= '0' && char <= '9') {
      current += char;
      pendingSeparators = 0;
    } else if (' ()./-+'.includes(char) && current && pendingSeparators < 3) {
      pendingSeparators += 1;
    } else {
      if (current) runs.push(current);
      current = '';
      pendingSeparators = 0;
    }
  }
  if (current) runs.push(current);
  return runs;
}

function phoneForms(digits: string): string[] {
  const forms = [digits];
  if (digits.startsWith('00')) forms.push(digits.slice(2));
  else if (digits.startsWith('0')) forms.push(digits.slice(1));
  return forms;
}

// The value may add a country code (1-3 digits) only when it is written as international ("+44",
// "0044"); the evidence may carry one the value left out. Either side may carry a trunk 0.
function samePhone(valueDigits: string, valueInternational: boolean, evidenceDigits: string): boolean {
  for (const v of phoneForms(valueDigits)) {
    for (const e of phoneForms(evidenceDigits)) {
      if (v === e) return true;
      const extra = Math.abs(v.length - e.length);
      if (extra < 1 || extra > 3) continue;
      if (v.length > e.length && valueInternational && e.length >= 7 && v.endsWith(e)) return true;
      if (e.length > v.length && v.length >= 7 && e.endsWith(v)) return true;
    }
  }
  return false;
}

const IDENTIFIER_SHAPE = /^[\p{L}\p{N}#_./ -]{2,64}$/u;

function checkIdentifier(value: string, evidence: string): ValueCheck {
  const clean = cleanValue(value);
  if (!IDENTIFIER_SHAPE.test(clean) || !/\p{N}/u.test(clean)) {
    return badFormat('an identifier is 2-64 letters, digits and # - _ . / with at least one digit');
  }
  const wanted = foldText(clean).replace(/ /g, '');
  const words = foldText(evidence).split(' ');
  for (let start = 0; start < words.length; start += 1) {
    let joined = '';
    for (let end = start; end < words.length && joined.length < wanted.length; end += 1) joined += words[end];
    if (joined === wanted) return OK;
  }
  return unsupported('the identifier does not occur in the evidence');
}

// Short function words in the languages our customers write; they carry no content.
const STOP_WORDS = new Set(
  (
    'the and for with from that this not has have are was were his her its our your their into onto about ' +
    'der die das und mit von dem den des ein eine ist nicht auf fur ' +
    'les des une pour avec dans sur est pas aux ' +
    'los las del con por para una que ' +
    'een het van met voor niet ' +
    'della con per una che non ' +
    'dos das com para uma nao'
  ).split(' '),
);

function checkSummary(value: string, evidence: string, minShare: number): ValueCheck {
  const v = foldText(value);
  const e = foldText(evidence);
  const evidenceWords = e.split(' ');
  const numbers = v.split(' ').filter((w) => /\d/.test(w));
  const missing = numbers.find((n) => !evidenceWords.includes(n));
  if (missing) return unsupported(`the number ${missing} does not occur in the evidence`);
  if (hasUnspacedScript(v)) {
    const share = bigramShare(v.replace(/ /g, ''), e.replace(/ /g, ''));
    return share >= minShare ? OK : unsupported(`only ${Math.round(share * 100)}% of the value's characters pairs occur in the evidence`);
  }
  const content = v.split(' ').filter((w) => w.length >= 3 && !/\d/.test(w) && !STOP_WORDS.has(w));
  if (content.length === 0 && numbers.length === 0) return unsupported('the value has no content words to find in the evidence');
  const found = content.filter((w) => evidenceWords.some((x) => similarWords(w, x))).length;
  const share = content.length === 0 ? 1 : found / content.length;
  return share >= minShare ? OK : unsupported(`only ${found} of the value's ${content.length} content words occur in the evidence`);
}

function similarWords(a: string, b: string): boolean {
  if (a === b) return true;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (short.length >= 4 && long.startsWith(short)) return true;
  return short.length >= 5 && long.slice(0, 5) === short.slice(0, 5);
}

function bigramShare(value: string, evidence: string): number {
  const chars = [...value];
  if (chars.length < 2) return evidence.includes(value) ? 1 : 0;
  let found = 0;
  for (let i = 0; i + 1 < chars.length; i += 1) if (evidence.includes(chars[i]! + chars[i + 1]!)) found += 1;
  return found / (chars.length - 1);
}

const CURRENCY_CODES = 'usd|eur|gbp|jpy|chf|cny|rmb|aud|cad|sek|nok|dkk|pln|inr|rub|brl|mxn|hkd|sgd|nzd|zar|krw';
const MONEY_WORDS = 'dollars?|euros?|pounds?|yen|yuan|francs?|kronor|kroner|zloty|reais|pesos?|rubles?|roubles?|bucks';
// Symbol or code before a number, or a number before a symbol, code, word or CJK unit; a percentage.
// No nested quantifiers: linear in the text.
const MONEY = new RegExp(
  `(?:[$€£¥₹₩₽¢]|\\b(?:${CURRENCY_CODES})\\b) ?\\d|\\d ?(?:[$€£¥₹₩₽円元块]|ドル|ユーロ|美元|欧元|(?:${CURRENCY_CODES}|${MONEY_WORDS})\\b)|\\d ?%|% ?\\d`,
  'i',
);

/** An amount of money or a percentage in the text ("$5000", "50 EUR", "5.000 €", "５０００円", "50%"), or null. */
export function moneyIn(text: string): string | null {
  const match = MONEY.exec(cleanValue(text));
  return match ? match[0] : null;
}
