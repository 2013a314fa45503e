/**
 * Which thread a message belongs to. Header-first like every serious helpdesk, but scoped so a
 * stranger never merges into someone else's thread. Pure: the caller looks the candidates up.
 */

/** A known Message-ID in this mailbox and the thread it belongs to. */
export interface ThreadKeyMatch {
  messageId: string;
  threadId: string;
  /** outbound: the agent's own reply; seen: a stored message; referenced: only named in headers. */
  kind: 'outbound' | 'seen' | 'referenced';
}

export interface CandidateThread {
  id: string;
  entityId: string;
  participants: ReadonlySet<string>;
}

export interface ThreadingInput {
  senderAddress: string;
  senderEntityId: string;
  /** In-Reply-To first, then References newest first: the order of preference among headers. */
  headerIds: readonly string[];
  /** Matches for `headerIds`; agent IDs that failed signature verification must not be in here. */
  matches: readonly ThreadKeyMatch[];
  threads: ReadonlyMap<string, CandidateThread>;
  /** The same entity's most recent thread with the same normalised subject inside the window. */
  subjectMatch: { threadId: string } | null;
  isForward: boolean;
}

export type ThreadDecision =
  { kind: 'join'; threadId: string; via: 'headers' | 'subject' } | { kind: 'new'; linkedThreadId: string | null; reason: string };

const KIND_RANK: Record<ThreadKeyMatch['kind'], number> = { outbound: 0, seen: 1, referenced: 2 };

export function decideThread(input: ThreadingInput): ThreadDecision {
  const headerThread = pickHeaderThread(input);
  if (headerThread) {
    const thread = input.threads.get(headerThread);
    const belongs = thread !== undefined && (thread.entityId === input.senderEntityId || thread.participants.has(input.senderAddress));
    if (belongs) return { kind: 'join', threadId: headerThread, via: 'headers' };
    return { kind: 'new', linkedThreadId: headerThread, reason: 'replied by headers but is not a participant' };
  }
  if (input.isForward) return { kind: 'new', linkedThreadId: null, reason: 'forwarded message' };
  if (input.subjectMatch) return { kind: 'join', threadId: input.subjectMatch.threadId, via: 'subject' };
  return { kind: 'new', linkedThreadId: null, reason: 'no header or subject match' };
}

/** The agent's own outbound IDs win, then stored inbound mail, then IDs only ever referenced. */
function pickHeaderThread(input: ThreadingInput): string | null {
  const position = new Map(input.headerIds.map((id, index) => [id, index]));
  const ranked = [...input.matches].sort(
    (a, b) =>
      KIND_RANK[a.kind] - KIND_RANK[b.kind] ||
      (position.get(a.messageId) ?? Number.MAX_SAFE_INTEGER) - (position.get(b.messageId) ?? Number.MAX_SAFE_INTEGER),
  );
  return ranked[0]?.threadId ?? null;
}

/** In-Reply-To first, then References from newest to oldest, without repeats. */
export function headerIdsInPreferenceOrder(inReplyTo: readonly string[], references: readonly string[]): string[] {
  return [...new Set([...inReplyTo, ...[...references].reverse()])];
}
