/**
 * Who the reply keeps in Cc: the people the answered message was addressed or copied to, as a mail
 * client's "Reply all" would, minus everyone a support reply must never go to, and only as far as
 * the answered message can be trusted to have chosen them. Pure.
 *
 * The rules, in order (docs/replies.md "Who a reply goes to"):
 * 1. Nobody when the answered message is untrusted (DMARC failed, or a Reply-To that differs from
 *    the From without DMARC pass): a forged mail cannot widen the reply's audience.
 * 2. Never our own addresses (the support address, the team's STAFF_ADDRESSES; any case, IDN or
 *    plus-tag form), never the reply's To again, never a list address, never an automated address
 *    (noreply, mailer-daemon, postmaster, …), never anything that is not a plain address.
 * 3. The customer's own addresses (its entity, or its domain in domain mode) and people at the
 *    sender's own company domain (not a free-mail domain) are kept.
 * 4. Anyone else (a stranger) is kept only when the answered message passed DMARC: the customer
 *    really copied them. With REPLY_KEEP_CC=customer only rule 3's customer addresses are kept.
 * 5. At most `max` addresses, first come first kept.
 *
 * Whoever is kept is a reader of the reply: the disclosure rule (disclosure.ts) sees them all, so
 * the customer's profile and the thread's notes are withheld from a turn whose reply copies anyone
 * who is not the customer.
 */
import { DAEMON_LOCAL_PARTS, DELIVERY_ROLE_LOCAL_PARTS, LIST_ROLE_LOCAL_PARTS } from '../mail/automated-phrases.ts';
import { domainOf, localPartOf, normaliseAddress } from '../mail/addresses.ts';
import { isCustomerAddress, type CustomerIdentity, type SenderEvidence } from './disclosure.ts';

export type KeepCcMode = 'all' | 'customer' | 'none';

export interface CcPolicyInput {
  mode: KeepCcMode;
  /** The answered message's To and Cc, as stored. */
  to: readonly string[];
  cc: readonly string[];
  /** Where the reply goes (its To). */
  replyTo: string;
  /** The answered message's sender and its authentication. */
  sender: SenderEvidence;
  customer: CustomerIdentity;
  /** The support address(es) and STAFF_ADDRESSES. */
  ownAddresses: readonly string[];
  isFreeMailDomain: (domain: string) => boolean;
  /** Most addresses kept. */
  max: number;
}

export type CcDropReason =
  | 'untrusted sender'
  | 'not an address'
  | 'our own address'
  | 'the reply is addressed to it'
  | 'duplicate'
  | 'list address'
  | 'automated address'
  | 'not the customer'
  | 'stranger and the sender is not authenticated'
  | 'over the cap';

export interface CcDecision {
  cc: string[];
  dropped: Array<{ address: string; reason: CcDropReason }>;
}

/** Candidates looked at; a message with more copies is not a conversation the agent widens. */
const MAX_CANDIDATES = 200;

/**
 * The form two addresses are compared in: normalised (case, IDN as punycode), the local part
 * compatibility-folded (fullwidth letters and the like) and without its +tag.
 */
function comparable(address: string): string {
  const local = localPartOf(address).normalize('NFKC').toLowerCase();
  const plus = local.indexOf('+');
  return `${plus > 0 ? local.slice(0, plus) : local}@${domainOf(address)}`;
}

/** The local part reduced for role matching: lower-case, no tag, no `-`, `_` or `.`. */
function compactLocal(address: string): string {
  const key = comparable(address);
  return key.slice(0, key.lastIndexOf('@')).replace(/[-_.]/g, '');
}

const AUTOMATED_PREFIXES = ['noreply', 'donotreply', 'dontreply', 'noreplies', 'nepasrepondre', 'noresponder', 'mailerdaemon'];
const AUTOMATED_LOCAL_PARTS = new Set([
  ...DAEMON_LOCAL_PARTS,
  ...DELIVERY_ROLE_LOCAL_PARTS,
  'autoreply',
  'autoresponder',
  'autoresponse',
  'notification',
  'notifications',
  'notify',
]);

/** An address only mail software writes from or reads. */
export function isAutomatedAddress(address: string): boolean {
  const local = compactLocal(address);
  return AUTOMATED_LOCAL_PARTS.has(local) || AUTOMATED_PREFIXES.some((p) => local.startsWith(p));
}

const LIST_SUFFIXES = ['-request', '-owner', '-bounces', '-subscribe', '-unsubscribe', '-join', '-leave', '-announce'];
const LIST_DOMAIN_LABELS = new Set(['lists', 'list', 'listserv', 'groups', 'mailman']);
const LIST_HOSTS = ['googlegroups.com', 'groups.io', 'freelists.org', 'lists.sourceforge.net', 'simplelists.com', 'groups.google.com'];

/**
 * An address that looks like a mailing list or its software. List mail itself (List-Id, List-Post)
 * is never answered (classify.ts); this catches a list copied on a customer's direct mail.
 */
export function isListAddress(address: string): boolean {
  const key = comparable(address);
  const local = key.slice(0, key.lastIndexOf('@'));
  const domain = domainOf(key);
  if (LIST_ROLE_LOCAL_PARTS.has(compactLocal(address))) return true;
  if (local.startsWith('owner-') || LIST_SUFFIXES.some((s) => local.endsWith(s))) return true;
  if (LIST_DOMAIN_LABELS.has(domain.split('.')[0] ?? '')) return true;
  return LIST_HOSTS.some((host) => domain === host || domain.endsWith(`.${host}`));
}

/** Untrusted as in disclosure.ts: DMARC failed, or a redirecting Reply-To without DMARC pass. */
function untrusted(sender: SenderEvidence): boolean {
  if (sender.authDmarc === 'fail') return true;
  return sender.replyTo !== null && sender.replyTo !== sender.fromAddress && sender.authDmarc !== 'pass';
}

export function decideCc(input: CcPolicyInput): CcDecision {
  const dropped: CcDecision['dropped'] = [];
  const candidates = [...input.to, ...input.cc].slice(0, MAX_CANDIDATES);
  if (input.mode === 'none') return { cc: [], dropped };
  if (untrusted(input.sender)) {
    return { cc: [], dropped: candidates.map((address) => ({ address, reason: 'untrusted sender' })) };
  }
  const own = new Set(input.ownAddresses.flatMap((a) => normaliseOrNull(a)));
  const seen = new Set<string>([...own, ...normaliseOrNull(input.replyTo)]);
  const replyKey = normaliseOrNull(input.replyTo)[0];
  const senderDomain = domainOf(normaliseOrNull(input.sender.fromAddress)[0] ?? '@');
  const authenticated = input.sender.authDmarc === 'pass';
  const cc: string[] = [];

  for (const raw of candidates) {
    const address = normaliseAddress(raw);
    if (address === null) {
      dropped.push({ address: raw.slice(0, 320), reason: 'not an address' });
      continue;
    }
    const key = comparable(address);
    const reason: CcDropReason | null = own.has(key)
      ? 'our own address'
      : key === replyKey
        ? 'the reply is addressed to it'
        : seen.has(key)
          ? 'duplicate'
          : isListAddress(address)
            ? 'list address'
            : isAutomatedAddress(address)
              ? 'automated address'
              : audienceReason(input, address, senderDomain, authenticated);
    seen.add(key);
    if (reason === null && cc.length >= input.max) dropped.push({ address, reason: 'over the cap' });
    else if (reason === null) cc.push(address);
    else dropped.push({ address, reason });
  }
  return { cc, dropped };
}

/** Null when the address may read the reply: the customer, a colleague at the sender's company, or a stranger the authenticated sender copied. */
function audienceReason(input: CcPolicyInput, address: string, senderDomain: string, authenticated: boolean): CcDropReason | null {
  if (isCustomerAddress(input.customer, address)) return null;
  if (input.mode === 'customer') return 'not the customer';
  const domain = domainOf(address);
  if (domain === senderDomain && !input.isFreeMailDomain(domain)) return null;
  return authenticated ? null : 'stranger and the sender is not authenticated';
}

function normaliseOrNull(address: string): string[] {
  const normalised = normaliseAddress(address);
  return normalised === null ? [] : [comparable(normalised)];
}
