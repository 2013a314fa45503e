/**
 * Message-IDs: the agent's own (signed, so a guessed ID cannot attach a stranger to a thread)
 * and synthetic ones for mail that came without. Pure.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ParsedEmail } from './parse-message.ts';

const AGENT_ID = /^<sa\.([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{8,32})\.([a-f0-9]{20})@([^<>\s@]+)>$/;

function signature(secret: string, threadId: string, nonce: string): string {
  return createHmac('sha256', secret).update(`${threadId}.${nonce}`).digest('hex').slice(0, 20);
}

/** A new Message-ID for a reply in `threadId`, on the support mailbox's domain. */
export function agentMessageId(secret: string, threadId: string, domain: string, nonce = randomBytes(9).toString('base64url')): string {
  return `<sa.${threadId}.${nonce}.${signature(secret, threadId, nonce)}@${domain}>`;
}

/** The thread a Message-ID was generated for, if the agent generated and signed it; else null. */
export function verifyAgentMessageId(secret: string, messageId: string): { threadId: string } | null {
  const match = AGENT_ID.exec(messageId);
  if (!match) return null;
  const [, threadId, nonce, mac] = match as unknown as [string, string, string, string];
  const expected = Buffer.from(signature(secret, threadId, nonce));
  const actual = Buffer.from(mac);
  return expected.length === actual.length && timingSafeEqual(expected, actual) ? { threadId } : null;
}

/**
 * A stable Message-ID for mail that has none: a hash of the headers that identify the message and
 * of its content, so the same mail ingested twice is recognised as a duplicate even when transport
 * headers (Received, Delivered-To) differ.
 */
export function syntheticMessageId(email: ParsedEmail): string {
  const hash = createHash('sha256');
  for (const part of [
    email.from?.address ?? '',
    email.to.map((a) => a.address).join(','),
    email.cc.map((a) => a.address).join(','),
    email.subject,
    email.date?.toISOString() ?? '',
    email.textPart ?? '',
    email.html ?? '',
    email.attachments.map((a) => a.sha256).join(','),
  ]) {
    hash.update(part).update('\u0000');
  }
  return `<synthetic.${hash.digest('hex').slice(0, 32)}@support-agent.invalid>`;
}

/** A Message-ID for bytes that could not be parsed at all: a hash of the raw bytes. */
export function rawHashMessageId(raw: Buffer): string {
  return `<raw.${createHash('sha256').update(raw).digest('hex').slice(0, 32)}@support-agent.invalid>`;
}
