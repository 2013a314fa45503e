/**
 * The loop guard: how many replies the agent has sent in a row to one correspondent, one company
 * domain or one thread with no human-looking message in between, and when to stop. An
 * auto-responder that sends no RFC 3834 headers answers every reply with the same template (a new
 * ticket number, a rotated plus-address or subject at most); a person writes something new, or at
 * least something that is not our own reply echoed back. Texts are compared as bottom-k sketches of
 * hashed character shingles, so the stored state is small, holds no readable text, and the
 * comparison works in every script (no word splitting). Pure.
 */
import { domainOf, foldPlusAddress } from '../mail/addresses.ts';

export interface LoopState {
  scope: string;
  /** Agent replies in this scope since the last human-looking message. */
  consecutive: number;
  /** Sketches of the latest inbound messages, oldest first (at most `MAX_FINGERPRINTS`). */
  fingerprints: number[][];
  /** Sketch of the agent's latest reply in this scope. */
  lastReply: number[];
  stoppedAt: Date | null;
  updatedAt: Date;
}

export interface LoopLimits {
  /** Replies in a row without a human-looking message before the agent stops (LOOP_MAX_REPLIES). */
  maxConsecutive: number;
  /** A scope quiet for this long starts afresh (LOOP_WINDOW). */
  windowMs: number;
}

/** How similar two messages must be for the second to count as the same template. */
const TEMPLATE_SIMILARITY = 0.8;
/** How much of a message may be our own last reply before it counts as an echo. */
const ECHO_SIMILARITY = 0.5;
const SKETCH_SIZE = 128;
const SHINGLE_CHARS = 4;
const MAX_TEXT_CHARS = 4000;
const MAX_FINGERPRINTS = 8;

/**
 * The scopes a reply counts in: the thread, each recipient (plus-tags always folded, so a rotating
 * `bot+1234@` is one correspondent) and each recipient's domain unless it is a free-mail domain
 * (where a domain says nothing about who writes).
 */
export function loopScopes(input: {
  mailboxId: string;
  threadId: string;
  recipients: readonly string[];
  isFreeMailDomain: (domain: string) => boolean;
}): string[] {
  const scopes = [`${input.mailboxId}|thread:${input.threadId}`];
  for (const recipient of input.recipients) {
    scopes.push(`${input.mailboxId}|address:${foldPlusAddress(recipient)}`);
    const domain = domainOf(recipient);
    if (!input.isFreeMailDomain(domain)) scopes.push(`${input.mailboxId}|domain:${domain}`);
  }
  return [...new Set(scopes)];
}

export function freshLoopState(scope: string, now: Date): LoopState {
  return { scope, consecutive: 0, fingerprints: [], lastReply: [], stoppedAt: null, updatedAt: now };
}

/**
 * A sorted bottom-k sketch of the text's character 4-shingles, after case folding, compatibility
 * normalisation, every number made `0` (ticket numbers, dates) and punctuation made a space.
 * Linear in the (capped) text.
 */
export function sketch(text: string): number[] {
  const normal = text
    .slice(0, MAX_TEXT_CHARS * 2)
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\p{N}+/gu, '0')
    .replace(/[^\p{L}\p{M}0]+/gu, ' ')
    .trim()
    .slice(0, MAX_TEXT_CHARS);
  if (normal.length === 0) return [];
  const hashes = new Set<number>();
  if (normal.length < SHINGLE_CHARS) hashes.add(fnv1a(normal, 0, normal.length));
  for (let i = 0; i + SHINGLE_CHARS <= normal.length; i++) hashes.add(fnv1a(normal, i, SHINGLE_CHARS));
  return [...hashes].sort((a, b) => a - b).slice(0, SKETCH_SIZE);
}

/** 32-bit FNV-1a of `length` UTF-16 code units of `text` from `start`. */
function fnv1a(text: string, start: number, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = start; i < start + length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Estimated Jaccard similarity of two sketches (the bottom-k estimator: of the k smallest hashes
 * of the union, the share found in both). Exact when both texts are short.
 */
export function similarity(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const inA = new Set(a);
  const inB = new Set(b);
  const union = [...new Set([...a, ...b])].sort((x, y) => x - y).slice(0, SKETCH_SIZE);
  let both = 0;
  for (const h of union) if (inA.has(h) && inB.has(h)) both++;
  return both / union.length;
}

/**
 * A message looks human when it says something: it is not empty, not the same template as one
 * of the scope's recent messages, and not our own last reply echoed back.
 */
export function looksHuman(state: LoopState, message: readonly number[]): boolean {
  if (message.length === 0) return false;
  if (state.lastReply.length > 0 && similarity(message, state.lastReply) >= ECHO_SIMILARITY) return false;
  return state.fingerprints.every((seen) => similarity(message, seen) < TEMPLATE_SIMILARITY);
}

/** The scope after the turn's inbound messages: a human-looking one resets the count. */
export function observeInbound(state: LoopState, texts: readonly string[], now: Date, limits: LoopLimits): LoopState {
  let next = now.getTime() - state.updatedAt.getTime() > limits.windowMs ? freshLoopState(state.scope, now) : { ...state };
  for (const text of texts) {
    const print = sketch(text);
    if (looksHuman(next, print)) next = { ...next, consecutive: 0, stoppedAt: null };
    if (print.length > 0) next = { ...next, fingerprints: [...next.fingerprints, print].slice(-MAX_FINGERPRINTS) };
  }
  return { ...next, updatedAt: now };
}

/** The scope after the agent replied in it. */
export function observeReply(state: LoopState, reply: string, now: Date): LoopState {
  return { ...state, consecutive: state.consecutive + 1, lastReply: sketch(reply), stoppedAt: null, updatedAt: now };
}

export interface LoopStop {
  scope: string;
  reason: string;
  /** True the first time this scope stops (the moment to hand the thread to a person). */
  firstStop: boolean;
}

/** Whether any scope has reached the limit; the first such scope, in the order given. */
export function loopStop(states: readonly LoopState[], limits: LoopLimits): LoopStop | null {
  const hit = states.find((s) => s.consecutive >= limits.maxConsecutive);
  if (!hit) return null;
  const what = hit.scope.slice(hit.scope.indexOf('|') + 1).replace(/:.*/, '');
  return {
    scope: hit.scope,
    reason: `suspected mail loop: ${hit.consecutive} replies in a row to this ${what} with no human-looking message in between (limit ${limits.maxConsecutive})`,
    firstStop: hit.stoppedAt === null,
  };
}

/** The scopes after a stop: each scope at the limit remembers when it stopped. */
export function markStopped(states: readonly LoopState[], limits: LoopLimits, now: Date): LoopState[] {
  return states.map((s) => (s.consecutive >= limits.maxConsecutive && s.stoppedAt === null ? { ...s, stoppedAt: now } : s));
}
