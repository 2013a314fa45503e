/**
 * The headers of the agent's reply: threading (In-Reply-To, References), a subject without
 * stacked prefixes, RFC 3834 marks, and nothing taken from the customer's mail that could inject
 * a header. Pure.
 */
import { sanitiseHeaderValue, replySubject } from './subject.ts';

export interface ReplyParent {
  messageId: string;
  /** Synthetic IDs were never on the wire; threading headers must not name them. */
  syntheticId: boolean;
  references: readonly string[];
  subject: string;
  fromAddress: string;
  replyTo: string | null;
}

export interface ComposedReply {
  to: string;
  subject: string;
  inReplyTo: string | null;
  references: string[];
  /** Extra headers every agent reply carries. */
  headers: Record<string, string>;
}

const MAX_REFERENCES = 20;
const MAX_REFERENCES_CHARS = 900;
const VALID_ID = /^<[^<>\s]{1,250}>$/;

/** The parent's chain plus the parent; when long, the root and the most recent IDs survive. */
function buildReferences(parentReferences: readonly string[], parentId: string | null): string[] {
  const chain = [...new Set([...parentReferences, ...(parentId ? [parentId] : [])])].filter((id) => VALID_ID.test(id));
  let trimmed = chain.length > MAX_REFERENCES ? [chain[0] as string, ...chain.slice(chain.length - (MAX_REFERENCES - 1))] : chain;
  while (trimmed.length > 2 && trimmed.join(' ').length > MAX_REFERENCES_CHARS) {
    trimmed = [trimmed[0] as string, ...trimmed.slice(2)];
  }
  return trimmed;
}

export function composeReply(parent: ReplyParent): ComposedReply {
  const parentId = parent.syntheticId || !VALID_ID.test(parent.messageId) ? null : parent.messageId;
  return {
    to: parent.replyTo ?? parent.fromAddress,
    subject: replySubject(sanitiseHeaderValue(parent.subject)),
    inReplyTo: parentId,
    references: buildReferences(parent.references, parentId),
    headers: {
      'Auto-Submitted': 'auto-replied',
      // Asks Exchange and friends not to answer us with their own auto-replies.
      'X-Auto-Response-Suppress': 'All',
      'X-Support-Agent': 'reply',
    },
  };
}
