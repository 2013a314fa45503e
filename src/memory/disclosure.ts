/**
 * Whether a turn may see the customer's profile and the thread's notes. Disclosure follows the
 * entity, not the thread: a thread can gain participants by headers alone (a forged mail can Cc
 * anyone), so what the agent knows about the customer goes into a prompt only when every person
 * who will read the reply is that customer, and nothing says the sender is someone else. Pure.
 */
import { domainOf, foldPlusAddress } from '../mail/addresses.ts';

export interface SenderEvidence {
  fromAddress: string;
  replyTo: string | null;
  /** The trusted server's DMARC verdict (pass | fail | none | …), null when there was none. */
  authDmarc: string | null;
}

/** Who the thread's customer is: the addresses of its entity, or its domain in domain mode. */
export interface CustomerIdentity {
  /** Normalised addresses attached to the entity (folded when FOLD_PLUS_ADDRESSES is on). */
  addresses: ReadonlySet<string>;
  /** The entity's domain when it is a company domain (ENTITY_KEY=domain), else null. */
  domain: string | null;
  /** Whether stored addresses are plus-folded (`ann+x@…` stored as `ann@…`). */
  foldPlus: boolean;
}

export interface DisclosureInput {
  /** The emails the turn answers (every one of them is shown to the model). */
  emails: readonly SenderEvidence[];
  /** Everyone the reply goes to. */
  recipients: readonly string[];
  customer: CustomerIdentity;
}

/** True when the address belongs to the thread's customer (an address of its entity, or its domain). */
export function isCustomerAddress(customer: CustomerIdentity, address: string): boolean {
  const key = customer.foldPlus ? foldPlusAddress(address) : address;
  if (customer.addresses.has(key) || customer.addresses.has(address)) return true;
  return customer.domain !== null && domainOf(address) === customer.domain;
}

/**
 * Null when the profile and thread notes may be used; otherwise why they are withheld. The rules,
 * in order: a sender that failed DMARC at our server may be anyone; an unverified mail whose
 * Reply-To differs from its From sends our answer somewhere else (whatever the domain: a shared
 * free-mail domain proves nothing); an email from someone other than the customer, or a reply
 * to someone other than the customer, must not carry the customer's data.
 */
export function withheldReason(input: DisclosureInput): string | null {
  if (input.emails.some((e) => e.authDmarc === 'fail')) return 'the sender failed DMARC';
  const redirected = input.emails.some((e) => e.replyTo !== null && e.replyTo !== e.fromAddress && e.authDmarc !== 'pass');
  if (redirected) return 'Reply-To differs from From and DMARC did not pass';
  const stranger = input.emails.find((e) => !isCustomerAddress(input.customer, e.fromAddress));
  if (stranger) return "the email comes from a participant who is not the thread's customer";
  const outsider = input.recipients.find((r) => !isCustomerAddress(input.customer, r));
  if (outsider) return "the reply goes to someone who is not the thread's customer";
  return null;
}

/**
 * Whether a stored customer message may be the source of the customer's facts: written by the
 * customer (its entity), and not contradicted by authentication or a redirecting Reply-To.
 */
export function trustedAsFactSource(message: SenderEvidence & { entityId: string | null }, entityId: string): boolean {
  if (message.entityId !== entityId) return false;
  if (message.authDmarc === 'fail') return false;
  return !(message.replyTo !== null && message.replyTo !== message.fromAddress && message.authDmarc !== 'pass');
}
