/**
 * Sensitive values a customer may write into a mail, replaced by typed placeholders before the
 * text reaches a prompt, a log line, a stored turn prompt, a summary or a fact:
 *
 * - payment card numbers (13-19 digits, spaces or hyphens between groups, a line break too; a
 *   major brand's issuer range and Luhn) → `[card •••• 4242]`;
 * - IBANs (the country's length and mod-97; with or without spaces; any case) → `[iban •••• 3000]`;
 * - card security codes and one-time codes after their label → `[cvv]`, `[one-time code]`;
 * - passwords and PINs after their label ("Passwort:", "mot de passe :", "パスワード：") → `[password]`;
 * - national numbers whose rules can be checked (US SSN, UK NINO, Dutch BSN, Spanish DNI/NIE,
 *   Italian codice fiscale, German Steuer-ID, Swedish personnummer) → `[national id]`.
 *
 * A number that fails its check stays: order, phone and tracking numbers are not cards. Digits and
 * words are read by hand scanners that visit each character a bounded number of times (at most 24
 * groups of at most 19 digits are weighed per run), and labels by one regular expression of
 * literals: linear in the text, whatever it holds. Pure, no I/O.
 */
import {
  isCardNumber,
  ibanLength,
  isCodiceFiscale,
  isIban,
  isSpanishId,
  isSwedishPersonnummer,
  isUkNino,
  isUsSsn,
} from './sensitive-checks.ts';
import { isWordChar, labelledValues } from './sensitive-labels.ts';

export type SensitiveKind = 'card' | 'iban' | 'cvv' | 'one-time-code' | 'password' | 'national-id';

/** A text with its sensitive values replaced, and the kinds replaced (each once, in order of first appearance). */
export interface MaskedText {
  text: string;
  kinds: SensitiveKind[];
}

interface Found {
  start: number;
  end: number;
  kind: SensitiveKind;
  /** The last four characters shown in the placeholder (cards and IBANs). */
  tail?: string;
}

const PLACEHOLDER: Record<SensitiveKind, (tail: string) => string> = {
  card: (tail) => `[card •••• ${tail}]`,
  iban: (tail) => `[iban •••• ${tail}]`,
  cvv: () => '[cvv]',
  'one-time-code': () => '[one-time code]',
  password: () => '[password]',
  'national-id': () => '[national id]',
};

/** Replaces every sensitive value of `text` by its placeholder. */
export function maskSensitive(text: string): MaskedText {
  // Every kind but a password after its label holds a digit.
  const digits = /\d/.test(text);
  const found: Found[] = [...(digits ? [...digitRunValues(text), ...wordValues(text)] : []), ...labelledValues(text)].sort(
    (a, b) => a.start - b.start || b.end - a.end,
  );
  let out = '';
  let at = 0;
  const kinds: SensitiveKind[] = [];
  for (const f of found) {
    if (f.start < at) continue;
    out += text.slice(at, f.start) + PLACEHOLDER[f.kind](f.tail ?? '');
    at = f.end;
    if (!kinds.includes(f.kind)) kinds.push(f.kind);
  }
  return kinds.length === 0 ? { text, kinds } : { text: out + text.slice(at), kinds };
}

/** `text` with its sensitive values replaced (see `maskSensitive`). */
export function maskText(text: string): string {
  return maskSensitive(text).text;
}

/** Placeholders of masked values, as they appear in a masked text. */
const PLACEHOLDER_PATTERN = /\[(card|iban) •••• [0-9A-Za-z]{1,4}\]|\[(cvv|one-time code|password|national id)\]/g;
const KIND_OF_PLACEHOLDER: Record<string, SensitiveKind> = {
  card: 'card',
  iban: 'iban',
  cvv: 'cvv',
  'one-time code': 'one-time-code',
  password: 'password',
  'national id': 'national-id',
};

/** The kinds of the placeholders a masked text holds (each once, in order of first appearance). */
export function maskedKindsIn(text: string): SensitiveKind[] {
  const kinds: SensitiveKind[] = [];
  for (const match of text.matchAll(PLACEHOLDER_PATTERN)) {
    const kind = KIND_OF_PLACEHOLDER[match[1] ?? match[2] ?? ''];
    if (kind && !kinds.includes(kind)) kinds.push(kind);
  }
  return kinds;
}

/** Whether `text` holds a sensitive value or the placeholder of one. */
export function holdsSensitive(text: string): boolean {
  return maskSensitive(text).kinds.length > 0 || maskedKindsIn(text).length > 0;
}

const isDigitCode = (code: number): boolean => code >= 48 && code <= 57;

/** One run of digit groups, e.g. "4242 4242 4242 4242" as four groups. */
interface Group {
  start: number;
  end: number;
  /** The separator before the group ('' for the first). */
  sep: string;
}

const MAX_GROUPS = 24;
const MAX_CARD_DIGITS = 19;

/** A separator between digit groups at `i`, and its length; 0 when there is none. */
function separatorAt(text: string, i: number): number {
  const ch = text[i];
  if (ch === ' ' || ch === '-' || ch === '\u00a0' || ch === '\u202f' || ch === '\t' || ch === '\n') return 1;
  return ch === '\r' && text[i + 1] === '\n' ? 2 : 0;
}

/** Cards, dashed SSNs and dashed personnummer: runs of digit groups on word boundaries. */
function digitRunValues(text: string): Found[] {
  const found: Found[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isDigitCode(text.charCodeAt(i))) {
      i++;
      continue;
    }
    const cleanStart = !isWordChar(text[i - 1]);
    const groups: Group[] = [];
    let sep = '';
    for (;;) {
      const start = i;
      while (i < text.length && isDigitCode(text.charCodeAt(i))) i++;
      groups.push({ start, end: i, sep });
      const sepLength = separatorAt(text, i);
      if (groups.length >= MAX_GROUPS || sepLength === 0 || !isDigitCode(text.charCodeAt(i + sepLength))) break;
      sep = text.slice(i, i + sepLength);
      i += sepLength;
    }
    const cleanEnd = !isWordChar(text[i]);
    found.push(...valuesInRun(text, groups, cleanStart, cleanEnd));
  }
  return found;
}

function valuesInRun(text: string, groups: readonly Group[], cleanStart: boolean, cleanEnd: boolean): Found[] {
  const digitsOf = (from: number, to: number): string =>
    groups
      .slice(from, to + 1)
      .map((g) => text.slice(g.start, g.end))
      .join('');
  const lengths = groups.map((g) => g.end - g.start).join(',');
  const dashed = groups.slice(1).every((g) => g.sep === '-');
  if (cleanStart && cleanEnd && dashed) {
    const whole = { start: groups[0]!.start, end: groups.at(-1)!.end, kind: 'national-id' as const };
    if (lengths === '3,2,4' && isUsSsn(digitsOf(0, 2))) return [whole];
    if ((lengths === '6,4' || lengths === '8,4') && isSwedishPersonnummer(digitsOf(0, 1))) return [whole];
  }
  // A card starts where the run starts (digits after it may be its expiry or CVV); a run after a
  // '+' is a phone number. Its groups share one separator (a line break, where a client wrapped
  // it, goes with any), and it ends on a word boundary. The longest card wins.
  if (!cleanStart || text[groups[0]!.start - 1] === '+') return [];
  let best = -1;
  let digits = 0;
  let windowSep = '';
  for (let e = 0; e < groups.length; e++) {
    digits += groups[e]!.end - groups[e]!.start;
    if (digits > MAX_CARD_DIGITS) break;
    const sep = e > 0 && !groups[e]!.sep.endsWith('\n') ? groups[e]!.sep : '';
    if (sep !== '' && windowSep !== '' && sep !== windowSep) break;
    if (sep !== '') windowSep = sep;
    if (e === groups.length - 1 && !cleanEnd) break;
    if (digits >= 13 && isCardNumber(digitsOf(0, e))) best = e;
  }
  if (best < 0) return [];
  return [{ start: groups[0]!.start, end: groups[best]!.end, kind: 'card', tail: digitsOf(0, best).slice(-4) }];
}

const isAsciiAlnum = (code: number): boolean => isDigitCode(code) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122);

/** The ASCII letters and digits from `at`, and where they end. */
function alnumRun(text: string, at: number): number {
  let i = at;
  while (i < text.length && isAsciiAlnum(text.charCodeAt(i))) i++;
  return i;
}

/**
 * Chunks of letters and digits joined by single spaces (or line breaks), from `at`, until they hold
 * `length` characters: an IBAN written in groups, a NINO written in pairs. Null unless exactly
 * `length` characters end on a word boundary.
 */
function chunksOf(text: string, at: number, length: number): { value: string; end: number } | null {
  let value = '';
  let i = at;
  for (;;) {
    const end = alnumRun(text, i);
    if (end === i) return null;
    value += text.slice(i, end);
    if (value.length >= length) return value.length === length && !isWordChar(text[end]) ? { value, end } : null;
    const sepLength = text[end] === '-' ? 0 : separatorAt(text, end);
    if (sepLength === 0) return null;
    i = end + sepLength;
  }
}

/** IBANs, NINOs, DNI/NIE and codici fiscali: words starting on a word boundary. */
function wordValues(text: string): Found[] {
  const found: Found[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isWordChar(text[i])) {
      i++;
      continue;
    }
    // A word starts here (words are always consumed whole).
    const end = alnumRun(text, i);
    const value = end > i ? wordValue(text, i, end) : null;
    if (value) found.push(value);
    i = value ? value.end : end;
    while (i < text.length && isWordChar(text[i])) i++;
  }
  return found;
}

const isLetterCode = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122);

function wordValue(text: string, start: number, end: number): Found | null {
  const length = end - start;
  const c0 = text.charCodeAt(start);
  const c1 = text.charCodeAt(start + 1);
  if (isLetterCode(c0) && isLetterCode(c1)) {
    const c2 = text.charCodeAt(start + 2);
    const c3 = text.charCodeAt(start + 3);
    // IBAN: two letters, two digits, maybe in groups; NINO: two capitals (then six digits and a letter, maybe in pairs).
    const iban = isDigitCode(c2) && isDigitCode(c3) ? ibanLength(text.slice(start, start + 2).toUpperCase()) : undefined;
    if (iban !== undefined) {
      const chunks = chunksOf(text, start, iban);
      if (chunks && isIban(chunks.value.toUpperCase())) return { start, end: chunks.end, kind: 'iban', tail: chunks.value.slice(-4) };
    }
    if (c0 <= 90 && c1 <= 90 && (length === 2 || length === 9)) {
      const nino = chunksOf(text, start, 9);
      if (nino && isUkNino(nino.value)) return { start, end: nino.end, kind: 'national-id' };
    }
    if (length === 16 && !isWordChar(text[end]) && isCodiceFiscale(text.slice(start, end).toUpperCase()))
      return { start, end, kind: 'national-id' };
    return null;
  }
  if (isWordChar(text[end])) return null;
  if (length === 9 && (isDigitCode(c0) || isLetterCode(c0)) && isSpanishId(text.slice(start, end).toUpperCase()))
    return { start, end, kind: 'national-id' };
  // A DNI written with its letter apart: 12345678-Z, 12345678 Z.
  if (length === 8 && isDigitCode(c0) && (text[end] === '-' || text[end] === ' ') && !isWordChar(text[end + 2])) {
    const letter = text[end + 1] ?? '';
    const dni = text.slice(start, end) + letter.toUpperCase();
    if (/^[A-Za-z]$/.test(letter) && isSpanishId(dni)) return { start, end: end + 2, kind: 'national-id' };
  }
  return null;
}
