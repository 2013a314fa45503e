/**
 * Who counts as the team: a message is the team's only when the channel it came through proves
 * it, never by its From alone (anyone can write any From). Proving channels: the served mailbox's
 * Sent folder (read over IMAP with the mailbox's own login) when its From is a team address; the
 * agent's own outbox (recognised by its signed Message-ID before this is asked); and inbound mail
 * from a team address that the trusted receiving server (TRUSTED_AUTHSERV_ID) reports as an
 * aligned DMARC pass. Everything else that claims a team address is a stranger's mail. Pure.
 */
import { domainOf, foldPlusAddress, normaliseAddress } from './addresses.ts';
import { trustedDmarc } from './auth-results.ts';

export interface TeamAddresses {
  /** The served mailbox's address. */
  supportAddress: string;
  /** STAFF_ADDRESSES, and the other served mailboxes. */
  staffAddresses?: readonly string[] | undefined;
}

export interface TeamMailInput {
  /** `sent-folder`: read from the served mailbox's Sent folder; `inbound`: anything else. */
  channel: 'sent-folder' | 'inbound';
  /** The From address as parsed (the first one). */
  from: string | null;
  /** How many From header fields the message has (more than one proves nothing). */
  fromFields: number;
  /** Every Authentication-Results header, topmost first. */
  authenticationResults: readonly string[];
  /** TRUSTED_AUTHSERV_ID; without it no inbound mail can prove it is the team's. */
  authservId: string | undefined;
}

export type TeamVerdict =
  /** The team's mail, and what proves it. */
  | { kind: 'team'; proof: 'sent-folder' | 'dmarc'; detail: string }
  /** Inbound mail whose From is a team address, without the proof: a stranger's mail, for a person. */
  | { kind: 'unproven'; detail: string }
  /** From is not a team address (in the Sent folder: a forward or a BCC copy, not the team's words). */
  | { kind: 'not-team'; detail: string | null };

/** The address compared as the team's: normalised (case, IDN) and plus-folded. */
function teamKey(address: string): string | null {
  return normaliseAddress(address, { foldPlus: true });
}

/** Whether an address is the served mailbox or a staff address (any case, IDN, `+tag` ignored). */
export function isTeamAddress(address: string | null, team: TeamAddresses): boolean {
  const key = address ? teamKey(address) : null;
  if (!key) return false;
  return [team.supportAddress, ...(team.staffAddresses ?? [])].some((a) => teamKey(a) === key);
}

/** Decides whether a message is the team's, and why (the reason is shown to a person). */
export function decideTeamMail(input: TeamMailInput, team: TeamAddresses): TeamVerdict {
  const from = input.from;
  if (!isTeamAddress(from, team)) {
    return {
      kind: 'not-team',
      detail: input.channel === 'sent-folder' ? `in the Sent folder, but From ${from ?? '(none)'} is not a team address` : null,
    };
  }
  if (input.fromFields > 1) return { kind: 'unproven', detail: `${input.fromFields} From fields: the sender cannot be proven` };
  if (input.channel === 'sent-folder') return { kind: 'team', proof: 'sent-folder', detail: 'filed in the Sent folder' };
  if (!input.authservId) {
    return { kind: 'unproven', detail: `From ${from} is a team address, but TRUSTED_AUTHSERV_ID is not set: inbound mail cannot prove it` };
  }
  const dmarc = trustedDmarc(input.authenticationResults, input.authservId);
  const claimed = domainOf(normaliseAddress(from) ?? from!);
  if (!dmarc) return { kind: 'unproven', detail: `From ${from} is a team address, but ${input.authservId} reported no authentication` };
  if (dmarc.result !== 'pass') {
    return { kind: 'unproven', detail: `From ${from} is a team address, but ${input.authservId} reports dmarc=${dmarc.result ?? 'none'}` };
  }
  const checked = dmarc.headerFrom?.replace(/^.*@/, '') ?? null;
  if (checked !== claimed) {
    return {
      kind: 'unproven',
      detail: `From ${from} is a team address, but the DMARC pass is for ${checked ?? 'no stated domain'}, not ${claimed}`,
    };
  }
  return { kind: 'team', proof: 'dmarc', detail: `dmarc=pass header.from=${claimed} by ${input.authservId}` };
}

/** A thread the Sent message's headers point at, with the addresses of its customer (linked ones too). */
export interface SentCandidate {
  threadId: string;
  customerAddresses: readonly string[];
}

/**
 * The thread a team message joins: the first candidate (in header preference order) whose customer
 * is among its recipients (To, Cc, Bcc). Headers alone never decide: a reply to customer B that
 * carries In-Reply-To of customer A's mail is B's, not A's. Null when no candidate's customer is
 * a recipient. Plus-addressing is ignored on both sides only when `foldPlus`.
 */
export function threadForTeamMessage(
  candidates: readonly SentCandidate[],
  recipients: readonly string[],
  foldPlus: boolean,
): string | null {
  const key = (a: string) => {
    const n = normaliseAddress(a);
    return n && foldPlus ? foldPlusAddress(n) : n;
  };
  const to = new Set(recipients.map(key).filter((a): a is string => a !== null));
  return candidates.find((c) => c.customerAddresses.some((a) => to.has(key(a) ?? '')))?.threadId ?? null;
}

/**
 * The addresses of raw Bcc header fields (a Sent copy keeps them): `<addr>` or a bare `x@y`, at
 * most 100. Display names are not needed here, so no full address-list parser.
 */
export function bccAddresses(fields: readonly string[]): string[] {
  const out: string[] = [];
  for (const field of fields) {
    for (const part of field.slice(0, 10_000).split(',')) {
      const open = part.lastIndexOf('<');
      const close = part.indexOf('>', open);
      const address = open >= 0 && close > open ? part.slice(open + 1, close) : part.split(/\s+/).find((w) => w.includes('@'));
      if (address?.includes('@') && out.length < 100) out.push(address.trim());
    }
  }
  return out;
}
