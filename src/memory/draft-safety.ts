/**
 * Safety rules every outgoing draft must pass, whatever wrote it (the model, a knowledge passage
 * it copied, the offline provider): the send gate holds a draft with any finding for a person.
 * Pure, no I/O; linear in its capped input. Rules:
 * - `asks-for-secret`: the draft asks the customer for a full card number, a card security code
 *   (CVV), a password or PIN, or a one-time/verification code — in the languages of
 *   draft-safety-vocabulary.ts. A warning ("we will never ask for your password", "do not send
 *   your card number") or the last four digits of a card is not a request;
 * - `link-text-mismatch`: a link whose text names a domain other than the one it goes to
 *   (`[acme.example](https://evil.example)`, or a user name before the host), read by the reply
 *   renderer's own Markdown parser (src/mail/reply-render.ts), so exactly the links that will be
 *   sent are checked;
 * - `lookalike-domain`: a domain in a link or in the text that imitates the team's own domains or
 *   the knowledge base's (one letter off, homoglyphs such as "rn" for "m" or Cyrillic "а", the
 *   name under another domain, "acme.example.evil.com"), punycode, or a label mixing scripts;
 * - `hidden-characters`: bidirectional controls (which reorder what a reader sees) or invisible
 *   characters (zero-width spaces, word joiners, tag characters, soft hyphens).
 */
import { domainToASCII, domainToUnicode } from 'node:url';
import { replyLinks } from '../mail/reply-render.ts';
import { foldText } from './text-fold.ts';
import { positionsOf, termLength } from './term-match.ts';
import {
  ASKS,
  CJK_ASKS,
  CJK_REFUSALS,
  COURTESY,
  FULL,
  LAST_DIGITS,
  REFUSALS,
  SECRETS,
  TRANSPARENT,
  type SecretKind,
} from './draft-safety-vocabulary.ts';

export type DraftSafetyRule = 'asks-for-secret' | 'link-text-mismatch' | 'lookalike-domain' | 'hidden-characters';

export interface DraftSafetyFinding {
  rule: DraftSafetyRule;
  /** The clause, link or domain that triggered it, at most 160 characters. */
  excerpt: string;
  reason: string;
}

export interface DraftSafetyInput {
  /** The draft as it would be sent (plain text or light Markdown). */
  body: string;
  /** The team's own domains (the support address's, the staff addresses'): never lookalikes. */
  ownDomains: readonly string[];
  /** Texts whose domains a draft must not imitate either (the knowledge passages the prompt held). */
  referenceTexts?: readonly string[];
}

/** Characters of the body read; a longer body is held by the reply guard's `too-long`. */
const MAX_BODY_CHARS = 20_000;
const MAX_REFERENCE_CHARS = 200_000;
const MAX_FINDINGS = 20;
/** Domains compared per host, and hosts read per draft: bounded work whatever the input. */
const MAX_PROTECTED_DOMAINS = 100;
const MAX_HOSTS = 100;
/** An asking word and the secret it asks for are at most this many words apart. */
const ASK_SPAN = 10;

/** Reviews a draft against the safety rules; any finding means a person must look before it goes out. */
export function reviewDraftSafety(input: DraftSafetyInput): DraftSafetyFinding[] {
  const body = input.body.slice(0, MAX_BODY_CHARS);
  const findings: DraftSafetyFinding[] = [];
  const add = (f: DraftSafetyFinding) => {
    if (findings.length < MAX_FINDINGS && !findings.some((g) => g.rule === f.rule && g.excerpt === f.excerpt)) findings.push(f);
  };
  hiddenCharacters(body).forEach(add);
  secretRequests(body).forEach(add);
  const own = input.ownDomains.map((d) => d.trim().toLowerCase()).filter((d) => d.includes('.'));
  const reference = hostsIn((input.referenceTexts ?? []).join('\n').slice(0, MAX_REFERENCE_CHARS)).map(registrable);
  const protectedDomains = [...new Set([...own, ...reference])].slice(0, MAX_PROTECTED_DOMAINS);
  linkFindings(body, own, protectedDomains).forEach(add);
  return findings;
}

function excerptOf(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= 160 ? flat : `${flat.slice(0, 157)}...`;
}

// ---------------------------------------------------------------------------------------------
// Hidden characters

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
// Zero-width joiners (U+200C/D) are left alone: emoji sequences and some scripts need them.
const INVISIBLE = /[\u00AD\u115F\u1160\u180E\u200B\u2060-\u2064\u3164\uFEFF\uFFA0]|\u034F|[\u{E0000}-\u{E007F}]/u;

function hiddenCharacters(body: string): DraftSafetyFinding[] {
  const found: DraftSafetyFinding[] = [];
  for (const [pattern, what] of [
    [BIDI, 'a bidirectional control character, which reorders what the reader sees'],
    [INVISIBLE, 'an invisible character'],
  ] as const) {
    const match = pattern.exec(body);
    if (!match) continue;
    const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    const around = body.slice(Math.max(0, match.index - 40), match.index + 40).replace(pattern, '�');
    found.push({ rule: 'hidden-characters', excerpt: excerptOf(around), reason: `the draft contains U+${code}, ${what}` });
  }
  return found;
}

// ---------------------------------------------------------------------------------------------
// Asking for secrets

/** Sentences: split at sentence punctuation and blank lines, before folding removes them. */
function clausesOf(body: string): string[] {
  return body
    .split(/[.!?;。！？；]+|\n[ \t]*\n/u)
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
}

// The first three letters of every secret's first word: a sentence with none of them names no secret.
const SECRET_PREFIXES = new Set(SECRETS.flatMap((s) => s.terms.map((t) => foldText(t.replace(/\*$/, '')).slice(0, 3))));
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

function secretRequests(body: string): DraftSafetyFinding[] {
  const found: DraftSafetyFinding[] = [];
  for (const clause of clausesOf(body)) {
    const folded = foldText(clause);
    const tokens = folded.split(' ');
    if (!UNSPACED.test(folded) && !tokens.some((t) => SECRET_PREFIXES.has(t.slice(0, 3)))) continue;
    const asked = SECRETS.filter((secret) => askedIn(tokens, secret) || cjkAskedIn(folded.replace(/ /g, ''), secret));
    if (asked.length > 0) {
      const names = asked.map((s) => s.name);
      const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
      found.push({ rule: 'asks-for-secret', excerpt: excerptOf(clause), reason: `the draft asks the customer for ${list}` });
    }
  }
  return found;
}

/** Whether the clause asks for the secret: an asking word within ASK_SPAN words of it, not refused. */
function askedIn(tokens: readonly string[], secret: SecretKind): boolean {
  const at = secret.terms.flatMap((t) => positionsOf(tokens, t).map((start) => ({ start, end: start + termLength(t) })));
  if (at.length === 0) return false;
  if (
    secret === SECRETS[0] &&
    LAST_DIGITS.some((t) => positionsOf(tokens, t).length > 0) &&
    !FULL.some((t) => positionsOf(tokens, t).length > 0)
  )
    return false;
  // Each asking word looks only at the secrets within ASK_SPAN words of it: linear in the clause.
  const endsAt = new Map<number, number>();
  for (const object of at) endsAt.set(object.start, Math.max(endsAt.get(object.start) ?? 0, object.end));
  for (const ask of new Set(ASKS.flatMap((t) => positionsOf(tokens, t)))) {
    for (let start = Math.max(0, ask - ASK_SPAN); start <= ask + ASK_SPAN; start += 1) {
      const end = endsAt.get(start);
      if (end !== undefined && !refused(tokens, ask, end)) return true;
    }
  }
  return false;
}

/** A refusal just before the asking word (over words like "to", "need", "please"), or up to two words after the secret. */
function refused(tokens: readonly string[], ask: number, objectEnd: number): boolean {
  const isRefusal = (i: number) =>
    REFUSALS.has(tokens[i] ?? '') || (tokens[i] === 't' && /n$/.test(tokens[i - 1] ?? '')) || REFUSALS.has(`${tokens[i - 1]} ${tokens[i]}`);
  const courtesy = (i: number) => COURTESY.some((c) => (tokens[i + 1] ?? '').startsWith(c) || (tokens[i + 2] ?? '').startsWith(c));
  for (let i = ask - 1, steps = 0; i >= 0 && steps < 5; i -= 1, steps += 1) {
    if (isRefusal(i)) return !courtesy(i);
    if (!TRANSPARENT.has(tokens[i]!)) break;
  }
  for (let i = ask + 1; i < Math.min(tokens.length, objectEnd + 2); i += 1) if (isRefusal(i) && !courtesy(i)) return true;
  return false;
}

function cjkAskedIn(compact: string, secret: SecretKind): boolean {
  if (!secret.cjk.some((t) => compact.includes(t.replace(/ /g, '')))) return false;
  if (!CJK_ASKS.some((t) => compact.includes(t))) return false;
  return !CJK_REFUSALS.some((t) => compact.includes(t));
}

// ---------------------------------------------------------------------------------------------
// Links and domains

// Names that look like hosts but are files.
const FILE_SUFFIXES = new Set(
  'pdf doc docx xls xlsx csv txt png jpg jpeg gif webp svg zip gz tar html htm php js ts json xml eml msg ppt pptx mp3 mp4 mov exe dmg ics log md'.split(
    ' ',
  ),
);

/** Host names written in the text (links, addresses, bare domains): one linear split, no backtracking. */
function hostsIn(text: string): string[] {
  const hosts = new Set<string>();
  for (const raw of text.split(/[^\p{L}\p{N}\p{M}.-]+/u)) {
    const host = raw.replace(/^[.-]+|[.-]+$/g, '').toLowerCase();
    const labels = host.split('.');
    const tld = labels.at(-1) ?? '';
    if (labels.length < 2 || labels.some((l) => l === '') || host.length > 253) continue;
    if (!/^(?:\p{L}{2,24}|xn--[a-z0-9-]{1,59})$/u.test(tld) || FILE_SUFFIXES.has(tld)) continue;
    hosts.add(host);
  }
  return [...hosts];
}

/** The registrable part: the last two labels, three under a two-letter country's "co", "com", "org"… */
function registrable(host: string): string {
  const labels = host.split('.');
  const second = labels.at(-2) ?? '';
  const take = labels.length > 2 && (labels.at(-1) ?? '').length === 2 && /^(?:co|com|org|net|ac|gov|edu|ne|or)$/.test(second) ? 3 : 2;
  return labels.slice(-take).join('.');
}

const under = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** How a host looks to a reader: confusable letters and digits made one ("rn" → "m", "0" → "o", Cyrillic "а" → "a"). */
function skeleton(text: string): string {
  return foldText(text.replace(/[.-]/g, ' '))
    .replace(/ /g, '')
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(/cl/g, 'd')
    .replace(/[0]/g, 'o')
    .replace(/[1il|]/g, 'l')
    .replace(/5/g, 's');
}

/** Whether two short strings are at most one edit apart (insert, delete, replace, swap). Linear. */
function oneEditApart(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return a === b;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  if (a.length === b.length) {
    if (a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
  }
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

const CONFUSABLE_SCRIPTS = [
  /\p{Script=Latin}/u,
  /\p{Script=Cyrillic}/u,
  /\p{Script=Greek}/u,
  /\p{Script=Armenian}/u,
  /\p{Script=Cherokee}/u,
];

/** Why a host imitates one of the protected domains (or is an IDN that hides its letters), or null. */
function lookalikeReason(host: string, own: readonly string[], protectedDomains: readonly string[]): string | null {
  if (own.some((d) => under(host, d))) return null;
  const unicode = domainToUnicode(host) || host;
  const labels = unicode.split('.');
  if (labels.some((l) => CONFUSABLE_SCRIPTS.filter((s) => s.test(l)).length > 1)) return `${host} mixes letters of several scripts`;
  if (host.split('.').some((l) => l.startsWith('xn--'))) return `${host} is a punycode name (${unicode})`;
  const reg = registrable(unicode);
  const core = reg.split('.')[0]!;
  const [regShape, coreShape] = [skeleton(reg), skeleton(core)];
  for (const domain of protectedDomains) {
    if (under(host, domain) || under(unicode, domain)) continue;
    const pReg = registrable(domain);
    const pCore = pReg.split('.')[0]!;
    if (reg === pReg) continue;
    if (regShape === skeleton(pReg) || coreShape === skeleton(pCore)) return `${host} looks like ${domain}`;
    if (pCore.length >= 4 && oneEditApart(core, pCore)) return `${host} is one letter away from ${domain}`;
    if (pCore.length >= 4 && unicode.split(/[.-]/).includes(pCore)) return `${host} carries the name of ${domain} but is another domain`;
  }
  return null;
}

/** Where a link goes (its host, or a mailto address's domain), and whether a user name hides before it. */
function targetOf(href: string): { host: string; userinfo: boolean } | null {
  if (/^mailto:/i.test(href)) {
    const address = decodeURIComponent(href.slice(7).split('?')[0] ?? '');
    const at = address.lastIndexOf('@');
    return at < 0 ? null : { host: address.slice(at + 1).toLowerCase(), userinfo: false };
  }
  try {
    const url = new URL(href);
    return { host: url.hostname.toLowerCase().replace(/\.$/, ''), userinfo: url.username !== '' || url.password !== '' };
  } catch {
    return null;
  }
}

function linkFindings(body: string, own: readonly string[], protectedDomains: readonly string[]): DraftSafetyFinding[] {
  const found: DraftSafetyFinding[] = [];
  const hosts = new Set(hostsIn(body));
  for (const link of replyLinks(body)) {
    const target = targetOf(link.href);
    if (!target) continue;
    hosts.add(target.host);
    const ascii = (h: string) => registrable(domainToASCII(h) || h);
    const shown = hostsIn(link.text).filter((h) => ascii(h) !== ascii(target.host));
    if (target.userinfo || shown.length > 0) {
      found.push({
        rule: 'link-text-mismatch',
        excerpt: excerptOf(`[${link.text}](${link.href})`),
        reason: target.userinfo
          ? `the link hides a user name before its real host ${target.host}`
          : `the link text names ${shown[0]} but the link goes to ${target.host}`,
      });
    }
  }
  for (const authority of urlAuthorities(body)) {
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      found.push({
        rule: 'link-text-mismatch',
        excerpt: excerptOf(authority),
        reason: `the address hides a user name before its real host ${authority.slice(at + 1).toLowerCase()}`,
      });
    }
  }
  for (const host of [...hosts].slice(0, MAX_HOSTS)) {
    const reason = lookalikeReason(host, own, protectedDomains);
    if (reason) found.push({ rule: 'lookalike-domain', excerpt: host, reason });
  }
  return found;
}

/**
 * What follows each "://" in the text up to the path: a mail client links the text part's URLs
 * itself, and "https://acme.example@evil.example" goes to evil.example. One pass.
 */
function urlAuthorities(text: string): string[] {
  const found: string[] = [];
  for (let i = text.indexOf('://'); i >= 0 && found.length < 100; i = text.indexOf('://', i + 3)) {
    const rest = text.slice(i + 3, i + 3 + 300);
    const end = rest.search(/[\s/?#<>()[\]"']/u);
    found.push(end < 0 ? rest : rest.slice(0, end));
  }
  return found;
}
