// Recognises attribution lines, the line (or 2-3 lines wrapped by the client) that a mail client
// writes above quoted history: "On Tue, Mar 4, 2025 at 10:15 AM Name <a@b> wrote:",
// "Am 04.03.2025 um 10:15 schrieb Name <a@b>:", "2025年3月4日(火) 10:15 Name <a@b>:",
// "04.03.2025, 10:15, "Name" <a@b>:", "Name <a@b> ezt írta (időpont: …):" …
//
// Structural rather than one regex per client: a short line that ends in a colon (or a verb inside
// Lotus/Zoho dashes) and carries a localised "wrote" verb, a date, a time and/or an address. How
// much of that evidence is present decides its strength:
//   strong: cut the history here even if unquoted text follows (Outlook/Yahoo put the old message
//           unquoted below the attribution);
//   weak:   an attribution only when ">"-quoted text follows ("Jane wrote:\n> …"), so that a
//           customer's own "Your colleague wrote:" followed by their text is never cut.
// Pure; every check is on a line capped at MAX_ATTRIBUTION_LINE characters with linear regexes.

/** How sure a line is an attribution. */
export type AttributionStrength = 'strong' | 'weak' | null;

// Localised "wrote" verbs (and the verb phrases clients use instead), lower-case.
const WROTE_VERBS: Record<string, string[]> = {
  en: ['wrote', 'writes'],
  de: ['schrieb', 'schrieben', 'geschrieben'],
  fr: ['a écrit', 'écrit', 'a ecrit'],
  es: ['escribió', 'escribio'],
  ca: ['va escriure'],
  it: ['ha scritto', 'scritto'],
  pt: ['escreveu'],
  nl: ['schreef', 'het volgende geschreven'],
  'sv/no/da': ['skrev'],
  fi: ['kirjoitti'],
  et: ['kirjutas'],
  pl: ['napisał(a)', 'napisał', 'napisała', 'pisze'],
  cs: ['napsal(a)', 'napsal', 'napsala'],
  sk: ['napísal(a)', 'napísal', 'napísala'],
  'hr/sr/bs/sl': ['napisao', 'napisala', 'napisal', 'написао'],
  hu: ['írta'],
  ro: ['a scris'],
  tr: ['yazdı'],
  el: ['έγραψε'],
  ru: ['написал(а)', 'написал', 'написала', 'пишет'],
  uk: ['написав(-ла)', 'написав(ла)', 'написав', 'написала', 'пише'],
  bg: ['написа'],
  lt: ['rašė', 'parašė'],
  lv: ['rakstīja'],
  vi: ['đã viết'],
  id: ['menulis'],
  he: ['כתב/ה', 'כתב', 'כתבה'],
  ar: ['كتب', 'كتبت'],
  fa: ['نوشت'],
  hi: ['ने लिखा', 'लिखा'],
  th: ['เขียนว่า', 'เขียน'],
  // Scripts without spaces between words: matched without word boundaries.
  ja: ['のメッセージ', '書きました', 'さんは書きました'],
  zh: ['写道', '寫道'],
  ko: ['작성'],
};

const UNSPACED_SCRIPT = /[\u3040-\u30FF\u3400-\u9FFF\uAC00-\uD7AF]/;

const VERBS: Array<{ verb: string; bounded: boolean }> = Object.values(WROTE_VERBS)
  .flat()
  .sort((a, b) => b.length - a.length)
  .map((verb) => ({ verb, bounded: !UNSPACED_SCRIPT.test(verb) }));

// Words that open an attribution ("On …", "Am …", "Le …"): localised "on"/"at"/"in".
const LEAD_WORDS = [
  'on',
  'at',
  'am',
  'le',
  'el',
  'em',
  'il',
  'il giorno',
  'in data',
  'a',
  'op',
  'den',
  'på',
  'dne',
  'dňa',
  'dnia',
  'w dniu',
  'pe',
  'στις',
  'vào',
  'pada',
  'pada tanggal',
  'בתאריך',
  'في',
  'เมื่อ',
  'el dia',
];
const LEAD_PREFIXES = ['在', '於', 'ב-'];

function startsWithLead(lower: string): boolean {
  for (const prefix of LEAD_PREFIXES) if (lower.startsWith(prefix)) return true;
  for (const word of LEAD_WORDS) {
    if (lower.startsWith(word)) {
      const next = lower[word.length];
      if (next === ' ' || next === ',') return true;
    }
  }
  return false;
}

// A time: 10:15, 10.15, 10:15:22 (not the "3.20" inside the date 4.3.2025).
const TIME = /(?<![\d.:])\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?![\d.])|\d{1,2}\s?(?:am|pm|uhr|h\d{2})\b/i;
// A date: three numeric parts (4.3.2025, 2025-03-04, 3/4/25, 2025. 3. 4.), a year, or CJK digits.
const NUMERIC_DATE = /\d{1,4}[./-]\s?\d{1,2}[./-]\s?\d{2,4}|\d{4}\s?[年년]|\d{1,2}\s?月\s?\d{1,2}\s?日/;
const YEAR = /(?<!\d)(?:19|20|25)\d{2}(?!\d)/;
const BRACKETED_ADDRESS = /<[^<>\s]{1,200}@[^<>\s]{1,200}>|\([^()\s]{1,200}@[^()\s]{1,200}\)|\[mailto:[^\]\s]{1,200}\]/;
const ADDRESS = /[^\s<>()[\]"',;:]{1,100}@[^\s<>()[\]"',;:]{1,100}\.[^\s<>()[\]"',;:.]{1,30}/;
// An address closing the line: "Name <a@b>:", "Name (a@b):", "Name a@b:".
const ADDRESS_AT_END = /[^\s<>()]{1,100}@[^\s<>()]{1,100}[>)\]]?["”]?\s*[;,]?$/;

/** Lines longer than this are prose, never an attribution. */
const MAX_ATTRIBUTION_LINE = 400;
const MAX_WRAPPED_PART = 200;

interface Evidence {
  verb: boolean;
  lead: boolean;
  date: boolean;
  time: boolean;
  bracketed: boolean;
  address: boolean;
  addressAtEnd: boolean;
}

/**
 * Strips what clients put around an attribution: Lotus Notes' "-----"Name" <a@b> wrote: -----",
 * Zoho's "---- On … wrote ----", bold markers. Returns the inner text and whether it ended in a
 * colon (a full-width one too).
 */
function core(line: string): { text: string; colon: boolean; dashed: boolean } {
  let text = line.trim();
  const dashed = /^-{2,}|-{2,}$/.test(text);
  text = text.replace(/^[-*\s]+|[-*\s]+$/g, '');
  const colon = /[:：]$/.test(text);
  if (colon) text = text.slice(0, -1).trimEnd();
  return { text, colon, dashed };
}

// One alternation of all verbs, longest first, so a line is scanned once rather than per verb.
const VERB_RE = new RegExp(VERBS.map(({ verb }) => verb.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'), 'g');
const BOUNDED_VERB = new Map(VERBS.map(({ verb, bounded }) => [verb, bounded]));

function findVerb(lower: string): { index: number; end: number } | null {
  VERB_RE.lastIndex = 0;
  for (let guard = 0; guard < 8; guard++) {
    const match = VERB_RE.exec(lower);
    if (!match) return null;
    const index = match.index;
    const end = index + match[0].length;
    if (!BOUNDED_VERB.get(match[0]) || (!isWordChar(lower[index - 1]) && !isWordChar(lower[end]))) return { index, end };
    VERB_RE.lastIndex = index + 1;
  }
  return null;
}

const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;
function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && WORD_CHAR.test(ch);
}

function evidence(text: string): Evidence {
  const lower = text.toLowerCase();
  const hasAt = text.includes('@');
  return {
    verb: findVerb(lower) !== null,
    lead: startsWithLead(lower),
    date: NUMERIC_DATE.test(text) || YEAR.test(text),
    time: TIME.test(text),
    bracketed: hasAt && BRACKETED_ADDRESS.test(text),
    address: hasAt && ADDRESS.test(text),
    addressAtEnd: hasAt && ADDRESS_AT_END.test(text),
  };
}

/**
 * The strength of one (possibly re-joined) attribution line. Strong: a colon (or Lotus/Zoho
 * dashes) at the end and a "wrote" verb with a bracketed address, or an opening "On/Am/Le…" and an
 * address; or no verb but an address closing the line after a date and a time (Gmail in Japanese,
 * Russian, Hebrew; Yandex; Mail.ru; "2025-03-04 10:15 GMT+02:00 Name <a@b>:"). Weak: a verb before
 * the colon, or an address closing it, without that support.
 */
export function attributionStrength(line: string): AttributionStrength {
  if (line.length < 6 || line.length > MAX_ATTRIBUTION_LINE) return null;
  const { text, colon, dashed } = core(line);
  if (text.length < 4) return null;
  if (!colon && !dashed) return colonlessAttribution(text);
  const e = evidence(text);
  if (!colon) {
    // Inside dashes without a colon only the full form counts: "---- On … Name <a@b> wrote ----".
    return e.verb && endsWithVerb(text) && (e.bracketed || (e.date && e.time)) ? 'strong' : null;
  }
  if (e.verb) {
    // A date and a time without an address needs a sender's name next to the verb, as clients
    // write it ("On 04/03/2025 09:58, Pinegrove Support wrote:", "Am 04.03.25 um 10:15 schrieb
    // Ferngrund:"); a customer's "On 4 March 2025 at 10:15 your driver wrote:" is weak.
    if (e.bracketed || (e.lead && e.address)) return 'strong';
    if (e.date && e.time && namesSender(text)) return 'strong';
    return 'weak';
  }
  if (e.addressAtEnd) return e.date && e.time ? 'strong' : 'weak';
  if (e.bracketed && e.date && e.time) return 'weak'; // mutt: "* Name <a@b> [2025-03-04 10:15 +0000]:"
  return null;
}

// "2013/7/20 sam via Forum <forum@…>": older Gmail (Japanese, Chinese) and forum relays write a
// numeric date, the sender and the bracketed address without a closing colon.
const DATE_FIRST = /^\d{2,4}[./-]\d{1,2}[./-]\d{1,4}\b/;
const BRACKETED_AT_END = /<[^<>\s]{1,200}@[^<>\s]{1,200}>$/;

/** Weak (only with a ">" quote below it): a date first and a bracketed address last, no colon. */
function colonlessAttribution(text: string): AttributionStrength {
  return DATE_FIRST.test(text) && BRACKETED_AT_END.test(text) && !/[.!?]\s/.test(text) ? 'weak' : null;
}

const TIME_GLOBAL = new RegExp(TIME.source, 'gi');
const TIME_SUFFIX = /^(?:\s|,|[ap]\.?m\.?|uhr|h|(?:gmt|utc)?[+-]\d{1,2}(?::?\d{2})?|gmt|utc)+/i;
const NAME = /^["“„«']?[\p{Lu}\p{Lo}][\p{L}\p{M}\p{N}.'’&-]*(?:\s+[\p{L}\p{M}\p{N}.'’&()-]+){0,5}["”»']?$/u;

/**
 * True when the words next to the verb name a sender: between the time and the verb ("…10:15,
 * Acme Support wrote"), after the last comma there, or else after the verb ("schrieb Acme").
 */
function namesSender(text: string): boolean {
  const lower = text.toLowerCase();
  const verb = findVerb(lower);
  if (!verb) return false;
  let timeEnd = -1;
  for (const match of text.matchAll(TIME_GLOBAL)) {
    if (match.index >= verb.index) break;
    timeEnd = match.index + match[0].length;
  }
  let before = timeEnd >= 0 ? text.slice(timeEnd, verb.index) : '';
  before = before.replace(TIME_SUFFIX, '');
  const comma = before.lastIndexOf(',');
  if (comma >= 0) before = before.slice(comma + 1);
  before = before.trim();
  if (before !== '') return NAME.test(before) && before !== 'I';
  const after = text.slice(verb.end).trim();
  return after !== '' && NAME.test(after);
}

function endsWithVerb(text: string): boolean {
  const lower = text.toLowerCase();
  const found = findVerb(lower);
  return found !== null && lower.slice(found.end).trim() === '';
}

/** A recognised attribution: how many lines it spans and how sure it is. */
export interface Attribution {
  lines: number;
  strength: 'strong' | 'weak';
}

/**
 * The attribution starting at line `i`, if any: one line, or two or three lines joined when the
 * client wrapped it ("… Name <\nname@example.com> wrote:"). A wrapped candidate's first line must
 * not end a sentence and must look like the start of an attribution; and a line that is an
 * attribution on its own is never glued to the customer's line above it.
 */
export function attributionAt(lines: readonly string[], i: number): Attribution | null {
  const first = (lines[i] ?? '').trim();
  if (first === '' || first.length > MAX_ATTRIBUTION_LINE) return null;
  const single = attributionStrength(first);
  if (single) return { lines: 1, strength: single };
  const yahoo = inlineBodyAttribution(first);
  if (yahoo) return { lines: 1, strength: 'strong' };
  // A wrapped attribution's first line never ends a sentence, nor with the colon of a whole one; a
  // full stop of an abbreviated date ("schrieb am Fr., 28. Apr.", "tir. 18. apr.") is no sentence end.
  if (first.length > MAX_WRAPPED_PART || endsSentence(first) || !looksLikeAttributionStart(first)) return null;

  let joined = first;
  for (let extra = 1; extra <= 2; extra++) {
    const next = (lines[i + extra] ?? '').trim();
    if (next === '' || next.length > MAX_WRAPPED_PART) return null;
    // A line starting with ">" is a quote, except the ">:" that closes an address wrapped after it.
    if (next.startsWith('>') && !(CLOSING_BRACKET_LINE.test(next) && OPEN_BRACKET.test(joined))) return null;
    // A complete attribution is not glued to the line above, unless that line is only the start of
    // its date ("tir. 18. apr." wrapped before "2017 kl. 13:09 skrev …:").
    if (/[:：]$/.test(next) && completeOnItsOwn(next) && !(extra === 1 && first.length <= 24 && DAY_MONTH.test(first))) return null;
    joined = joined.endsWith('<') || next.startsWith('>') ? `${joined}${next}` : `${joined} ${next}`;
    if (!/[:：]$|-{2,}$/.test(next)) continue; // the attribution is not complete yet
    const strength = attributionStrength(joined);
    if (strength) return { lines: extra + 1, strength };
  }
  return null;
}

// "18. apr.", "28. Apr 2017": a day number and an abbreviated month name (Nordic and German Gmail).
const DAY_MONTH = /(?:^|\s)\d{1,2}\.\s?\p{L}{3,5}\.?(?:\s|$)/u;
const CLOSING_BRACKET_LINE = /^>\s?[:：]?$/;
const OPEN_BRACKET = /<[^<>\s]{1,200}$/;
const ABBREVIATED_DATE_END = /(?:^|[\s,])(?:\p{L}{1,5}|\d{1,4})\.$/u;

function endsSentence(line: string): boolean {
  if (/[!?。！？:：]$/.test(line)) return true;
  return (
    line.endsWith('.') && !(ABBREVIATED_DATE_END.test(line) && (NUMERIC_DATE.test(line) || YEAR.test(line) || /\d{1,2}\.\s/.test(line)))
  );
}

// A line that is a whole attribution by itself ("On Tue, … <a@b> wrote:") rather than the tail of a
// wrapped one ("<care@example.com> wrote:").
function completeOnItsOwn(line: string): boolean {
  if (attributionStrength(line) !== 'strong') return false;
  return startsWithLead(line.toLowerCase()) || (TIME.test(line) && (NUMERIC_DATE.test(line) || YEAR.test(line)));
}

function looksLikeAttributionStart(line: string): boolean {
  const lower = line.toLowerCase();
  return (
    startsWithLead(lower) || line.includes('@') || line.endsWith('<') || TIME.test(line) || NUMERIC_DATE.test(line) || DAY_MONTH.test(line)
  );
}

// Yahoo's plain-text part can run the quoted body on the same line: "On …, Name<a@b> wrote:   Hello".
function inlineBodyAttribution(line: string): boolean {
  if (!startsWithLead(line.toLowerCase())) return false;
  const match = /[:：]\s{2,}\S/.exec(line);
  if (!match) return false;
  return attributionStrength(line.slice(0, match.index + 1)) === 'strong';
}

const SENTENCE_END = /[.!?。！？]/g;
const MAX_SAME_LINE_BOUNDARIES = 20;

/**
 * Text written on the same line as a strong attribution ("Sounds good. On Wed, Apr 4, 2012 at
 * 3:59 PM, Name <a@b> wrote:"): returns the customer's part before it, or null. The split is at
 * a sentence end. The last one followed by "On/Am/Le…" wins (so "Le mar. 4 mars …" is not split
 * after "mar."); otherwise the first one after a sentence without digits (so "ti 4. maalisk.
 * 2025 klo 10.15 …" and "tir. 4. mar. 2025 …" are not split inside their dates). A line that opens with "On/Am/Le…" and is an
 * attribution as a whole is not split.
 */
export function splitSameLineAttribution(line: string): { before: string } | null {
  if (line.length > MAX_ATTRIBUTION_LINE * 2 || !/[:：]\s*-*\s*$/.test(line)) return null;
  if (startsWithLead(line.toLowerCase()) && attributionStrength(line) === 'strong') return null;
  if (!line.includes('@') && !TIME.test(line)) return null; // nothing could make a suffix strong
  const boundaries: number[] = [];
  SENTENCE_END.lastIndex = 0;
  for (let m = SENTENCE_END.exec(line); m && boundaries.length < MAX_SAME_LINE_BOUNDARIES; m = SENTENCE_END.exec(line)) {
    const p = m.index + 1;
    let q = p;
    while (line[q] === ' ') q++;
    // Latin scripts need a space after the full stop; CJK full stops do not.
    if (q === p && !/[。！？]/.test(line[p - 1] ?? '')) continue;
    if (q < line.length) boundaries.push(q);
  }
  let leadSplit = -1;
  let otherSplit = -1;
  for (const q of boundaries) {
    const suffix = line.slice(q);
    if (attributionStrength(suffix) !== 'strong') continue;
    if (startsWithLead(suffix.toLowerCase())) leadSplit = q;
    else if (otherSplit < 0 && isSentenceBefore(line.slice(0, q).trimEnd())) otherSplit = q;
  }
  const at = leadSplit >= 0 ? leadSplit : otherSplit;
  if (at <= 0) return null;
  const before = line.slice(0, at).trimEnd();
  return before === '' ? null : { before };
}

// The customer's text before a same-line attribution: no digits (dates have them) and either two
// or more words, a "!"/"?" ending or a long word ("tir." alone is a weekday; "Det passer fint." and
// "알겠습니다." are sentences).
function isSentenceBefore(prefix: string): boolean {
  if (/\d/.test(prefix)) return false;
  return /[!?。！？]$/.test(prefix) || prefix.split(/\s+/).length >= 2 || /\p{L}{5,}\.$/u.test(prefix);
}
