/**
 * Address normalisation and entity keys. Pure.
 */
import { domainToASCII } from 'node:url';

/** Well-known free-mail domains: in ENTITY_KEY=domain mode these never group strangers into one account. */
export const FREE_MAIL_DOMAINS: ReadonlySet<string> = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'hotmail.co.uk',
  'live.com',
  'msn.com',
  'yahoo.com',
  'yahoo.co.uk',
  'yahoo.fr',
  'yahoo.de',
  'ymail.com',
  'rocketmail.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'aol.com',
  'gmx.de',
  'gmx.net',
  'gmx.com',
  'gmx.at',
  'web.de',
  't-online.de',
  'freenet.de',
  'mail.ru',
  'bk.ru',
  'list.ru',
  'inbox.ru',
  'yandex.ru',
  'yandex.com',
  'qq.com',
  '163.com',
  '126.com',
  'sina.com',
  'proton.me',
  'protonmail.com',
  'pm.me',
  'zoho.com',
  'fastmail.com',
  'hey.com',
  'orange.fr',
  'wanadoo.fr',
  'free.fr',
  'laposte.net',
  'sfr.fr',
  'libero.it',
  'virgilio.it',
  'naver.com',
  'daum.net',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'interia.pl',
  'ziggo.nl',
  'kpnmail.nl',
  'btinternet.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'yahoo.co.jp',
  'docomo.ne.jp',
  'ezweb.ne.jp',
  'tutanota.com',
]);

export interface NormaliseOptions {
  /** Fold `name+tag@domain` into `name@domain`. */
  foldPlus?: boolean;
}

const LOCAL_PART = /^[^\s@<>()[\]\\,;:"\u0000-\u001f\u007f]{1,64}$/u;

/**
 * Case-folds, trims and makes the domain IDN-safe (punycode). Returns null for anything that is not
 * a usable mailbox address (group syntax, missing domain, control characters, over-long parts).
 */
export function normaliseAddress(raw: string | null | undefined, options: NormaliseOptions = {}): string | null {
  if (!raw) return null;
  const trimmed = raw.trim().replace(/^<|>$/g, '').trim();
  const at = trimmed.lastIndexOf('@');
  if (at <= 0 || at === trimmed.length - 1 || trimmed.length > 320) return null;
  let local = trimmed.slice(0, at).normalize('NFC').toLowerCase();
  const domainRaw = trimmed
    .slice(at + 1)
    .toLowerCase()
    .replace(/\.$/, '');
  if (!LOCAL_PART.test(local)) return null;
  const domain = domainToASCII(domainRaw);
  if (!domain || !/^[a-z0-9.-]+$/.test(domain) || domain.startsWith('.') || domain.includes('..')) return null;
  if (options.foldPlus) {
    const plus = local.indexOf('+');
    if (plus > 0) local = local.slice(0, plus);
  }
  return `${local}@${domain}`;
}

export function domainOf(address: string): string {
  return address.slice(address.lastIndexOf('@') + 1);
}

export function localPartOf(address: string): string {
  return address.slice(0, address.lastIndexOf('@'));
}

export type EntityKind = 'person' | 'domain';

export interface EntityKeyOptions {
  mode: 'address' | 'domain';
  extraFreeMailDomains?: readonly string[];
}

/**
 * The profile key for a sender: the address itself, or in domain mode the sender's company domain
 * (free-mail addresses stay personal, or every gmail user would share one profile).
 */
export function entityKeyFor(address: string, options: EntityKeyOptions): { kind: EntityKind; key: string } {
  if (options.mode === 'domain') {
    const domain = domainOf(address);
    const free = FREE_MAIL_DOMAINS.has(domain) || (options.extraFreeMailDomains ?? []).includes(domain);
    if (!free) return { kind: 'domain', key: domain };
  }
  return { kind: 'person', key: address };
}

/** Strips characters that have no place in a display name (controls, CR/LF, NUL), and trims. */
export function cleanDisplayName(name: string | null | undefined): string | null {
  if (!name) return null;
  const cleaned = name
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return cleaned.length > 0 ? cleaned.slice(0, 200) : null;
}

/** `name+tag@domain` to `name@domain`. */
export function foldPlusAddress(address: string): string {
  const at = address.lastIndexOf('@');
  const plus = address.indexOf('+');
  return plus > 0 && plus < at ? address.slice(0, plus) + address.slice(at) : address;
}
