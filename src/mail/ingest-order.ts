/**
 * Which messages of a fetched chunk may be stored side by side. Storing one message reads what the
 * messages before it wrote (thread keys, participants, entities, recent threads by subject), so a
 * message waits for every earlier one it could depend on; unrelated customers' mail need not.
 * Pure: the ingester asks, then stores.
 */
import { entityKeyFor, foldPlusAddress, type EntityKeyOptions } from './addresses.ts';
import type { ParsedEmail } from './parse-message.ts';
import { normaliseSubject } from './subject.ts';

export interface OrderSettings {
  /** Every customer writes to it; it never makes two messages related. */
  supportAddress: string;
  foldPlusAddresses: boolean;
  entityKey: EntityKeyOptions;
}

/**
 * Everything through which two messages could affect each other's entity or thread. Two messages
 * that share a key must be stored in their original order:
 * - a Message-ID one writes as a thread key and the other looks up (its own ID or one it references);
 * - an address: the sender's entity, and recipients who become participants the other's sender
 *   may need to belong to the thread;
 * - the entity key (colleagues of one company in domain mode);
 * - the normalised subject (the subject rule joins the same customer's recent thread).
 */
export function orderKeys(email: ParsedEmail, messageId: string, settings: OrderSettings): string[] {
  const keys = new Set<string>([`id:${messageId}`]);
  for (const id of [...email.inReplyTo, ...email.references]) keys.add(`id:${id}`);
  const sender = email.from?.address;
  if (sender) {
    const entityAddress = settings.foldPlusAddresses ? foldPlusAddress(sender) : sender;
    keys.add(`address:${sender}`);
    keys.add(`address:${entityAddress}`);
    keys.add(`entity:${entityKeyFor(entityAddress, settings.entityKey).key}`);
  }
  for (const recipient of [...email.to, ...email.cc]) {
    if (recipient.address && recipient.address !== settings.supportAddress) keys.add(`address:${recipient.address}`);
  }
  const subject = normaliseSubject(email.subject);
  if (subject) keys.add(`subject:${subject}`);
  return [...keys];
}

/** Whether a message with `keys` must wait for one with `other` (stored before it in the chunk). */
export function sharesKey(keys: readonly string[], other: ReadonlySet<string>): boolean {
  return keys.some((key) => other.has(key));
}
