/** The two memory layers as the pure core sees them: plain values, no ORM types. */

export type FactCategory = 'identity' | 'preference' | 'account' | 'situation' | 'sentiment' | 'other';
/** The longest fact key the product keeps (snakeCase cuts model-proposed keys to the same length). */
export const MAX_KEY_LENGTH = 60;
/** The one-line rule an error (and `facts set --help`) quotes. */
export const FACT_KEY_RULE = `snake_case: lower-case letters and digits joined by single underscores, at most ${MAX_KEY_LENGTH} characters`;

export const FACT_CATEGORIES: readonly FactCategory[] = ['identity', 'preference', 'account', 'situation', 'sentiment', 'other'];

export interface ProfileFactView {
  /** The stored fact's id, when it has one (the inclusion trace names it). */
  id?: string;
  key: string;
  value: string;
  category: FactCategory;
  confidence: number;
  /** email | operator | import */
  origin: string;
  expiresAt: Date | null;
  /** The tags of the thread it was promoted from: what it is about, for ordering by relevance. */
  tags?: readonly string[];
  /** When it became true (the statement's date): the newer of two equally relevant facts stays longer. */
  validFrom?: Date | null;
}

/** Profile state: keyed by entity, durable, confident. */
export interface ProfileState {
  entityId: string;
  name: string | null;
  facts: ProfileFactView[];
  pastThreads: Array<{ threadId: string; topic: string; closedAt: Date | null; tags?: readonly string[] }>;
  /** Promises still open (or overdue): overdue ones first in the prompt, and they flag the turn for a person. */
  outstandingCommitments: Array<{ text: string; due: string | null; dueAt: Date | null; overdue: boolean }>;
}

/** Thread state: keyed by thread, ephemeral, allowed to be wrong. */
export interface ThreadState {
  subject: string;
  summary: string;
  openItems: string[];
  currentIntent: string;
  tags: string[];
  /** Identifiers, codes, addresses and deadlines kept verbatim until unpinned (oldest dropped beyond the cap). */
  pinnedItems: string[];
  status: string;
}

/** One message of the thread's rolling buffer: what the customer wrote or what we replied. */
export interface BufferMessage {
  direction: 'inbound' | 'outbound';
  /** agent | staff for outbound, customer for inbound. */
  author: string;
  date: Date;
  text: string;
}

export interface IncomingEmail {
  messageId: string;
  fromName: string | null;
  fromAddress: string;
  date: Date;
  /** The new text only. */
  text: string;
  /** The attachments' text block stored with the message (names, sizes, text read); '' or absent when none. */
  attachmentText?: string;
}
