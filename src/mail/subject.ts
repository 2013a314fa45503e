/**
 * Subject normalisation for threading and reply subjects. Pure.
 */

// Reply and forward prefixes as mail clients write them, in many languages, optionally counted
// ("RE[2]:", "Re(3):") and with full-width colons from CJK clients.
const REPLY_WORDS = [
  're',
  'aw',
  'sv',
  'vs',
  'antw',
  'antwort',
  'réf',
  'ref',
  'rif',
  'r',
  'odp',
  'res',
  'ynt',
  'atb',
  'vá',
  '回复',
  '回覆',
  '答复',
  '答覆',
  '返信',
];
const FORWARD_WORDS = ['fwd', 'fw', 'wg', 'tr', 'enc', 'rv', 'doorst', 'vl', 'pd', 'továbbítás', '转发', '轉寄', '转寄', '転送'];

function prefixPattern(words: readonly string[]): RegExp {
  const alternatives = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return new RegExp(`^\\s*(?:${alternatives})\\s*(?:\\[\\d+\\]|\\(\\d+\\))?\\s*[:：]\\s*`, 'iu');
}

const REPLY_PREFIX = prefixPattern(REPLY_WORDS);
const FORWARD_PREFIX = prefixPattern(FORWARD_WORDS);
const LIST_TAG = /^\s*\[[^\]\r\n]{1,40}\]\s*/u;

/** Removes any stack of reply/forward prefixes and list tags from the front. Keeps case. */
function stripSubjectPrefixes(subject: string): string {
  let current = subject;
  for (let guard = 0; guard < 100; guard++) {
    const next = current.replace(REPLY_PREFIX, '').replace(FORWARD_PREFIX, '').replace(LIST_TAG, '');
    if (next === current) break;
    current = next;
  }
  return current.trim();
}

/** The threading key: prefixes and list tags removed, whitespace collapsed, case-folded. */
/**
 * Enough to tell subjects apart, and short enough for the database's index on it (a B-tree entry
 * holds at most 2,704 bytes; 300 characters are at most 1,200 bytes of UTF-8).
 */
const NORMALISED_SUBJECT_MAX_CHARS = 300;

export function normaliseSubject(subject: string | null | undefined): string {
  const normalised = stripSubjectPrefixes(sanitiseHeaderValue(subject ?? ''))
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase()
    .normalize('NFC');
  return [...normalised].slice(0, NORMALISED_SUBJECT_MAX_CHARS).join('').trim();
}

/** Whether the subject presents the mail as a forward (a forward starts a new thread). */
export function isForwardSubject(subject: string | null | undefined): boolean {
  let current = subject ?? '';
  for (let guard = 0; guard < 100; guard++) {
    if (FORWARD_PREFIX.test(current)) return true;
    const next = current.replace(REPLY_PREFIX, '').replace(LIST_TAG, '');
    if (next === current) return false;
    current = next;
  }
  return false;
}

/** `Re: <original>` without stacking prefixes; safe to put in a header. */
export function replySubject(original: string | null | undefined): string {
  let base = sanitiseHeaderValue(original ?? '');
  for (let guard = 0; guard < 100; guard++) {
    const next = base.replace(REPLY_PREFIX, '');
    if (next === base) break;
    base = next;
  }
  base = base.trim();
  return base ? `Re: ${base}`.slice(0, 250) : 'Re: your message';
}

/** A header value with CR, LF, NUL and other controls removed: nothing can inject a header. */
export function sanitiseHeaderValue(value: string): string {
  return value
    .replace(/[\u0000-\u0008\u000a-\u001f\u007f]+/g, ' ')
    .replace(/\t/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
}
