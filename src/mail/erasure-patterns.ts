/**
 * What "mentions the erased customer" means, as data: the needles (addresses, names, handles),
 * the regular expressions that find them in stored text and in raw mail bytes, and the plain
 * substring conditions PostgreSQL uses to pick the rows worth looking at. Pure: no I/O.
 *
 * The rules (docs/guarantees.md "Guarantees", "Erasure leaves nothing"):
 * - **Addresses** (strong): each of the customer's addresses, case-insensitively, with an optional
 *   `+tag` (`alice+news@…`), the IDN domain in punycode and in Unicode, and the at-sign in the
 *   forms real mail and web text use: `@`, quoted-printable `=40`, percent `%40`, the HTML
 *   entities `&#64;` `&#x40;` `&commat;`, and ` [at] ` / `(at)`. An address must not be part of a
 *   longer one (`malice@…`, `…example.community` are other people), except after a `=XX`/`%XX`
 *   escape (`=3Calice@…`).
 * - **Full names** (strong): the entity's name, the display names of its addresses and the
 *   display names its own messages used, when they have at least two words of which one has at
 *   least 3 characters; also in "Family, Given" order. Matched case-insensitively on word
 *   boundaries (so "Ann Lee" does not match inside "Joann Leeds"), with any run of spaces,
 *   non-breaking spaces, `.`, `_`, `-`, `+`, `%20` or `&nbsp;` between the words, and in NFC and
 *   NFD Unicode forms.
 * - **Distinctive local parts** (strong): `alice.ace`, `a_ace1987`: at least 6 characters with a
 *   digit or a separator, and not a role name (`no-reply`, `support`…). They identify a person
 *   on their own (a user name, a handle in a URL).
 * - **Labels** (strong): addresses and handles as the product's snake_case labels
 *   (`alice_alicecorp_example`), the form they take in a thread's intent and tags.
 * - **Weak needles**: given and family names (each word of a name with at least 3 letters, not a
 *   particle like "van" or "der"), one-word display names, and other local parts of at least 3
 *   characters. "Alice" alone may be anyone, so a weak needle is only redacted in a value (one
 *   column of one row, one raw message) where a strong needle also occurs: "Alice Ace wrote…
 *   Alice asks" loses both, "Alice from accounting" elsewhere is left alone. Nor does a weak
 *   needle match inside an address (`zoe@elsewhere.example`), where a full name does.
 * - Names also match without their accents ("Zoe Unal"), and `_` separates words (labels).
 *
 * Case-insensitivity is spelled out per character (`[aA]`), not left to a flag, so one rule serves
 * Unicode text and raw bytes (a flag cannot fold a letter's UTF-8 bytes), non-ASCII letters too.
 */
import { domainToUnicode } from 'node:url';

/** What identifies the customer, gathered before anything is deleted. */
export interface ErasureIdentity {
  /** Normalised addresses (lower case, IDN domain in punycode). */
  addresses: readonly string[];
  /** Entity name, address display names, names the customer's own mail used. */
  names: ReadonlyArray<string | null | undefined>;
}

export interface ErasureNeedles {
  addresses: string[];
  fullNames: string[];
  handles: string[];
  /** Addresses and handles as snake_case labels (`alice_alicecorp_example`): intents and tags are made so. */
  labels: string[];
  weak: string[];
}

/** What an address becomes: still shaped like an address, so address columns stay parseable. */
export const REDACTED_ADDRESS = 'erased@erased.invalid';
/** What a name or handle becomes. */
export const REDACTED_NAME = '[erased]';

const MIN_NAME_CHARS = 3;
const MAX_NAMES = 40;
const ROLE_LOCAL_PARTS = new Set([
  'info',
  'support',
  'sales',
  'billing',
  'admin',
  'contact',
  'hello',
  'team',
  'office',
  'mail',
  'noreply',
  'no-reply',
  'do-not-reply',
  'donotreply',
  'postmaster',
  'help',
  'service',
  'accounts',
  'account',
  'webmaster',
  'abuse',
  'security',
]);
/** Name particles and titles: never a needle on their own. */
const PARTICLES = new Set(['van', 'von', 'der', 'den', 'del', 'della', 'des', 'les', 'las', 'los', 'mrs', 'miss', 'prof', 'the', 'and']);

/** Builds the needles from what the database knows about the customer. */
export function erasureNeedles(identity: ErasureIdentity): ErasureNeedles {
  const addresses = unique(identity.addresses.map((a) => a.trim().toLowerCase()).filter((a) => /^[^@\s]+@[^@\s]+$/.test(a)));
  const allAddresses = unique(addresses.flatMap((a) => [a, unicodeDomainForm(a)]));
  const fullNames: string[] = [];
  const weak: string[] = [];
  const names = unique(identity.names.map(cleanName).filter((n): n is string => n !== null)).slice(0, MAX_NAMES);
  for (const name of names) {
    const words = name.split(' ');
    const tokens = words.filter((w) => letterCount(w) >= MIN_NAME_CHARS && !PARTICLES.has(w.toLowerCase()));
    if (words.length >= 2 && tokens.length >= 1) {
      fullNames.push(name);
      if (words.length === 2) fullNames.push(`${words[1]}, ${words[0]}`);
    }
    weak.push(...tokens.map((t) => t.replace(/^[.'-]+|[.,'-]+$/g, '')).filter((t) => letterCount(t) >= MIN_NAME_CHARS));
  }
  const handles: string[] = [];
  for (const address of addresses) {
    const local = address.slice(0, address.lastIndexOf('@')).replace(/\+.*$/, '');
    if (ROLE_LOCAL_PARTS.has(local) || local.length < MIN_NAME_CHARS) continue;
    if (local.length >= 6 && /[0-9._-]/.test(local)) handles.push(local);
    else weak.push(local);
  }
  const withForms = (list: string[]) => unique(list.flatMap((s) => [s.normalize('NFC'), s.normalize('NFD'), withoutMarks(s)]));
  return {
    addresses: allAddresses,
    fullNames: withForms(fullNames),
    handles: unique(handles),
    labels: unique([...addresses, ...handles].map(snakeLabel).filter((l) => l.length >= MIN_NAME_CHARS)),
    weak: uniqueFolded(withForms(weak)).filter((w) => !fullNames.some((f) => f.toLowerCase() === w.toLowerCase())),
  };
}

/** How the product turns text into a label (src/memory/thread-state.ts `snakeCase`). */
function snakeLabel(text: string): string {
  return withoutMarks(text)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/** "Zoë Ünal" as people type it without accents: "Zoe Unal". */
function withoutMarks(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .normalize('NFC');
}

function uniqueFolded(items: string[]): string[] {
  const seen = new Map<string, string>();
  for (const item of items) if (!seen.has(item.toLowerCase())) seen.set(item.toLowerCase(), item);
  return [...seen.values()];
}

/**
 * Where a pattern runs (JavaScript only: PostgreSQL's regex engine took seconds per megabyte with
 * these patterns, so the database only picks candidates, see `searchPlan`):
 * - `text`: Unicode text;
 * - `bytes`: raw mail as a latin1 "binary" string: a non-ASCII letter is matched as its UTF-8
 *   bytes, its ISO-8859-1 byte, and its percent and HTML-entity forms.
 */
export type PatternFlavour = 'text' | 'bytes';

/** Regular-expression sources; `null` when the group has no needle. */
export interface ErasurePatterns {
  address: string | null;
  /** Full names and distinctive local parts. */
  strongName: string | null;
  weak: string | null;
  /** address | strongName: decides whether a value mentions the customer at all. */
  strong: string | null;
}

// `_` separates words here: the product's snake_case labels (`user_alice_ace`) hold names too.
const WORD_TEXT = [
  'A-Za-z0-9',
  range(0xc0, 0xd6),
  range(0xd8, 0xf6),
  range(0xf8, 0x2af),
  range(0x370, 0x1fff),
  range(0x2c00, 0xd7ff),
  range(0xf900, 0xffef),
].join('');
// Bytes that start (or, in ISO-8859-1, are) a letter; E2 starts UTF-8 punctuation such as ’ and “.
const WORD_BYTES = 'A-Za-z0-9\\xC0-\\xE1\\xE3-\\xFF';
const ADDRESS_LEFT = '(?:(?<![A-Za-z0-9._+-])|(?<=[%=][0-9A-Fa-f]{2}))';
const ADDRESS_RIGHT = '(?![A-Za-z0-9_-]|\\.[A-Za-z0-9])';
const HANDLE_RIGHT = '(?![A-Za-z0-9_@-]|\\.[A-Za-z0-9]|=40|%40)';
const AT = '(?:@|=40|%40|&#0{0,3}64;|&#[xX]0{0,3}40;|&[cC][oO][mM][mM][aA][tT];|\\s?[[(]\\s?[aA][tT]\\s?[\\])]\\s?)';
const PLUS_TAG = '(?:\\+[A-Za-z0-9._=-]{0,64})?';

/** Regular-expression sources for the needles in one flavour. */
function erasurePatterns(needles: ErasureNeedles, flavour: PatternFlavour): ErasurePatterns {
  const word = flavour === 'bytes' ? WORD_BYTES : WORD_TEXT;
  const nameLeft = `(?<![${word}])`;
  const nameRight = `(?![${word}])`;
  const sep = separator(flavour);
  const address = alternation(
    needles.addresses.map((a) => {
      const at = a.lastIndexOf('@');
      const local = literal(a.slice(0, at), flavour);
      const domain = literal(a.slice(at + 1), flavour);
      return `${ADDRESS_LEFT}${local}${PLUS_TAG}${AT}${domain}${ADDRESS_RIGHT}`;
    }),
  );
  const names = needles.fullNames.map(
    (n) =>
      `${nameLeft}${n
        .split(/[ ,]+/)
        .map((w) => literal(w, flavour))
        .join(`,?${sep}`)}${nameRight}`,
  );
  const handles = needles.handles.map((h) => `${ADDRESS_LEFT}${literal(h, flavour)}${HANDLE_RIGHT}`);
  const labels = needles.labels.map((l) => `${nameLeft}${literal(l, flavour)}${nameRight}`);
  const strongName = alternation([...names, ...handles, ...labels]);
  // A weak needle never matches inside an address: "zoe@elsewhere.example" is as likely someone else.
  const weakLeft = `(?<![${word}@.])`;
  const weakRight = `(?![${word}]|[@.+][A-Za-z0-9]|=40|%40)`;
  const weak = alternation(needles.weak.map((w) => `${weakLeft}${literal(w, flavour)}${weakRight}`));
  return { address, strongName, weak, strong: alternation([address, strongName].filter((p): p is string => p !== null)) };
}

/** The outcome of redacting one value. */
export interface Redaction {
  value: string;
  changed: boolean;
  /** A strong needle occurred (so the weak ones were applied). */
  strong: boolean;
}

/**
 * Redacts strings in JavaScript with the same rules as the SQL: addresses, then full names and
 * handles, then (only where a strong needle occurred, or when `weak: 'always'`) the weak needles.
 */
export class Redactor {
  private readonly address: RegExp | null;
  private readonly strongName: RegExp | null;
  private readonly weak: RegExp | null;

  constructor(needles: ErasureNeedles, flavour: 'text' | 'bytes') {
    const patterns = erasurePatterns(needles, flavour);
    const compile = (source: string | null) => (source ? new RegExp(source, 'g') : null);
    this.address = compile(patterns.address);
    this.strongName = compile(patterns.strongName);
    this.weak = compile(patterns.weak);
  }

  /** Redacts one value; `weak: 'always'` when the caller already knows the value is about the customer. */
  redact(value: string, options: { weak?: 'auto' | 'always' | 'never' } = {}): Redaction {
    let out = value;
    if (this.address) out = out.replace(this.address, REDACTED_ADDRESS);
    if (this.strongName) out = out.replace(this.strongName, REDACTED_NAME);
    const strong = out !== value;
    const weakMode = options.weak ?? 'auto';
    if (this.weak && (weakMode === 'always' || (weakMode === 'auto' && strong))) out = out.replace(this.weak, REDACTED_NAME);
    return { value: out, changed: out !== value, strong };
  }

  /** Whether a strong needle occurs (without redacting). */
  mentions(value: string): boolean {
    return [this.address, this.strongName].some((re) => {
      if (!re) return false;
      re.lastIndex = 0;
      const found = re.test(value);
      re.lastIndex = 0;
      return found;
    });
  }
}

/**
 * Base64 forms of the strong needles, for a literal byte search of raw mail: each needle as
 * written, in lower, upper and title case, at each of the three alignments a base64 encoder can
 * start it at, minus the partial first and last groups. Line-wrapped base64 can split a form, so
 * this only widens the candidate search; the decoding rewrite is what redacts.
 */
export function base64Forms(needles: ErasureNeedles): string[] {
  const forms = new Set<string>();
  const plain = [...needles.addresses, ...needles.fullNames.filter((n) => !n.includes(',')), ...needles.handles];
  for (const needle of plain) {
    for (const variant of unique([needle, needle.toLowerCase(), needle.toUpperCase(), titleCase(needle)])) {
      const bytes = Buffer.from(variant, 'utf8');
      for (let offset = 0; offset < 3; offset++) {
        const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
        // Characters that depend on the bytes before the needle, or after it, are dropped.
        const start = offset === 0 ? 0 : Math.ceil((offset * 8) / 6);
        const stableBits = (offset + bytes.length) * 8;
        const end = Math.floor(stableBits / 6);
        const form = encoded.slice(start, end);
        if (form.length >= 8) forms.add(form);
      }
    }
  }
  return [...forms];
}

/** One condition of the database's candidate search: a lower-cased ASCII run, or exact spellings. */
export type Anchor = { folded: string } | { exact: string[] };

/**
 * How the database finds candidates without regular expressions (PostgreSQL's engine took about
 * two seconds per megabyte with these patterns, and more on near misses): a strong needle can
 * occur in a value only if each of its anchors does, and `strpos(lower(value), anchor)` is a fast,
 * linear scan. An anchor is the longest ASCII run of a word (`alice`, `alicecorp.example`, `nal`
 * of "Ünal"), which also survives the percent, entity and `=40` spellings; a word without one
 * (Иван, 王) is looked for in its case and Unicode-form variants. Candidates are then redacted
 * exactly in JavaScript.
 */
export interface SearchPlan {
  /** For text and JSON columns: OR over needles, AND over each needle's anchors. */
  text: Anchor[][];
  /** For `encode(raw, 'escape')` of raw mail: exact spellings as that encoding writes bytes. */
  raw: Anchor[][];
  /** Base64 spellings of the strong needles (`base64Forms`), searched as they are. */
  base64: string[];
}

export function searchPlan(needles: ErasureNeedles): SearchPlan {
  const sets: Anchor[][] = [];
  for (const address of needles.addresses) {
    const at = address.lastIndexOf('@');
    sets.push([anchorFor(address.slice(0, at), /[a-z0-9._-]+/g), anchorFor(address.slice(at + 1), /[a-z0-9.-]+/g)].filter(isAnchor));
  }
  for (const name of needles.fullNames)
    sets.push(
      name
        .split(/[ ,]+/)
        .map((w) => anchorFor(w, /[a-z0-9]+/g))
        .filter(isAnchor),
    );
  for (const handle of needles.handles) sets.push([anchorFor(handle, /[a-z0-9._-]+/g)].filter(isAnchor));
  for (const label of needles.labels) sets.push([{ folded: label }]);
  const text = uniqueBy(
    sets.filter((s) => s.length > 0),
    (s) => JSON.stringify(s.map((a) => JSON.stringify(a)).sort()),
  );
  const raw = text.map((set) =>
    set.map((a): Anchor => ('folded' in a ? a : { exact: unique(a.exact.flatMap((v) => rawSpellings(v).map(escapeEncoded))) })),
  );
  return { text, raw, base64: base64Forms(needles) };
}

function anchorFor(word: string, asciiRun: RegExp): Anchor | null {
  const runs = word.toLowerCase().match(asciiRun) ?? [];
  const longest = runs.reduce((best, run) => (run.replace(/[._-]/g, '').length > best.replace(/[._-]/g, '').length ? run : best), '');
  if (longest.replace(/[._-]/g, '').length >= 3) return { folded: longest };
  if (word.length === 0) return null;
  const cased = [word, word.toLowerCase(), word.toUpperCase(), titleCase(word)];
  return { exact: unique(cased.flatMap((v) => [v.normalize('NFC'), v.normalize('NFD')])) };
}

function isAnchor(anchor: Anchor | null): anchor is Anchor {
  return anchor !== null;
}

/** The bytes a word can be stored as in raw mail: UTF-8, and ISO-8859-1 when it fits. */
function rawSpellings(word: string): Buffer[] {
  const spellings = [Buffer.from(word, 'utf8')];
  if ([...word].every((c) => (c.codePointAt(0) ?? 0) <= 0xff)) spellings.push(Buffer.from(word, 'latin1'));
  return spellings;
}

/** PostgreSQL's `encode(bytes, 'escape')`: NUL and bytes >= 0x80 as `\ooo`, a backslash doubled. */
function escapeEncoded(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) out += b === 0 || b >= 0x80 ? `\\${b.toString(8).padStart(3, '0')}` : b === 0x5c ? '\\\\' : String.fromCharCode(b);
  return out;
}

function uniqueBy<T>(items: T[], key: (item: T) => string): T[] {
  const seen = new Map<string, T>();
  for (const item of items) if (!seen.has(key(item))) seen.set(key(item), item);
  return [...seen.values()];
}

function separator(flavour: PatternFlavour): string {
  const nbsp = flavour === 'text' ? '\u00a0' : '\\xA0';
  const utf8Nbsp = flavour === 'bytes' ? '|\\xC2\\xA0' : '';
  return `(?:[\\s${nbsp}._+-]|%20|=20|&[nN][bB][sS][pP];|&#160;${utf8Nbsp}){1,12}`;
}

/** One needle as a pattern: each character case-folded and escaped for the flavour. */
function literal(text: string, flavour: PatternFlavour): string {
  let out = '';
  for (const ch of text) out += charPattern(ch, flavour);
  return out;
}

function charPattern(ch: string, flavour: PatternFlavour): string {
  const code = ch.codePointAt(0) ?? 0;
  if (code < 0x80) {
    if (/[A-Za-z]/.test(ch)) return `[${ch.toLowerCase()}${ch.toUpperCase()}]`;
    if (/[\\^$.*+?()[\]{}|/]/.test(ch)) return `\\${ch}`;
    return ch;
  }
  const variants = unique([ch, ch.toLowerCase(), ch.toUpperCase()]);
  const forms = new Set<string>();
  for (const v of variants) {
    const cp = v.codePointAt(0) ?? 0;
    if (v.length <= 2 && [...v].length === 1) {
      forms.add(`&#0{0,3}${cp};`);
      forms.add(`&#[xX]0{0,3}${hexCaseless(cp.toString(16))};`);
    }
    if (flavour === 'text') {
      forms.add(v);
      continue;
    }
    const utf8 = [...Buffer.from(v, 'utf8')];
    const byte = (b: number) => `\\x${hex2(b)}`;
    forms.add(utf8.map(byte).join(''));
    if ([...v].length === 1 && cp <= 0xff) forms.add(byte(cp));
    forms.add(utf8.map((b) => `%${hexCaseless(hex2(b))}`).join(''));
  }
  return `(?:${[...forms].join('|')})`;
}

function hexCaseless(hex: string): string {
  return [...hex].map((c) => (/[a-f]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c)).join('');
}

function hex2(b: number): string {
  return b.toString(16).toUpperCase().padStart(2, '0');
}

function alternation(parts: string[]): string | null {
  return parts.length === 0 ? null : parts.map((p) => `(?:${p})`).join('|');
}

function range(from: number, to: number): string {
  return `${String.fromCharCode(from)}-${String.fromCharCode(to)}`;
}

/** A usable name: quotes, backslashes and control characters removed, whitespace collapsed. */
function cleanName(name: string | null | undefined): string | null {
  if (!name) return null;

  const cleaned = name
    .replace(/["\\\u0000-\u001f\u007f<>]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^'+|'+$/g, '')
    .trim();
  if (cleaned.includes('@')) return null;
  return letterCount(cleaned) >= MIN_NAME_CHARS ? cleaned.slice(0, 200) : null;
}

function letterCount(text: string): number {
  return (text.match(/\p{L}|\p{N}/gu) ?? []).length;
}

function unicodeDomainForm(address: string): string {
  const at = address.lastIndexOf('@');
  const domain = address.slice(at + 1);
  if (!domain.split('.').some((label) => label.startsWith('xn--'))) return address;
  const unicode = domainToUnicode(domain);
  return unicode ? `${address.slice(0, at)}@${unicode}` : address;
}

function titleCase(text: string): string {
  return text.toLowerCase().replace(/(^|[\s.,_-])(\p{L})/gu, (_m, sep: string, letter: string) => sep + letter.toUpperCase());
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}
