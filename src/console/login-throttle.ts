/**
 * Slows password guessing per client address, so an attacker hammering the login form from one
 * place is held back while the operator, from their own address, is not. After a few free
 * failures every further attempt from that address must wait a delay that doubles with each
 * failure (1 s, 2 s, 4 s … capped at a minute); an attempt that comes too early is refused without
 * looking at the password. A correct password clears the address's record. Nothing sleeps: the
 * throttle only decides, with an injectable clock.
 *
 * Memory is bounded: records are kept in least-recently-failed order, forgotten after a quiet
 * spell, and the oldest are evicted beyond `maxTracked` addresses.
 */
import { isIPv6 } from 'node:net';

export interface LoginThrottleOptions {
  /** Failures from one address before any delay (default 5). */
  freeFailures?: number;
  /** The first delay; each further failure doubles it (default 1 s). */
  baseDelayMs?: number;
  /** The longest delay (default 60 s). */
  maxDelayMs?: number;
  /** An address with no failure for this long starts afresh (default 15 min). */
  forgetAfterMs?: number;
  /** At most this many addresses are tracked; the least recently failed are dropped first (default 10,000). */
  maxTracked?: number;
  now?: () => number;
}

export type ThrottleDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

interface ClientRecord {
  failures: number;
  lastFailureAt: number;
  notBefore: number;
}

export class LoginThrottle {
  private readonly records = new Map<string, ClientRecord>();
  private readonly freeFailures: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly forgetAfterMs: number;
  private readonly maxTracked: number;
  private readonly now: () => number;

  constructor(options: LoginThrottleOptions = {}) {
    this.freeFailures = options.freeFailures ?? 5;
    this.baseDelayMs = options.baseDelayMs ?? 1000;
    this.maxDelayMs = options.maxDelayMs ?? 60_000;
    this.forgetAfterMs = Math.max(options.forgetAfterMs ?? 15 * 60_000, this.maxDelayMs);
    this.maxTracked = Math.max(1, options.maxTracked ?? 10_000);
    this.now = options.now ?? Date.now;
  }

  /** May this client try a password now? Call it before comparing the password. */
  check(client: string): ThrottleDecision {
    const record = this.records.get(client);
    if (!record) return { allowed: true };
    const at = this.now();
    if (at - record.lastFailureAt > this.forgetAfterMs) {
      this.records.delete(client);
      return { allowed: true };
    }
    return at < record.notBefore ? { allowed: false, retryAfterMs: record.notBefore - at } : { allowed: true };
  }

  /** A wrong password from this client. */
  recordFailure(client: string): void {
    const at = this.now();
    const previous = this.records.get(client);
    const failures = previous && at - previous.lastFailureAt <= this.forgetAfterMs ? previous.failures + 1 : 1;
    // Re-inserting keeps the map in least-recently-failed order, which both pruning and eviction rely on.
    this.records.delete(client);
    this.records.set(client, { failures, lastFailureAt: at, notBefore: at + this.delayAfter(failures) });
    this.prune(at);
  }

  /** The right password: this client starts afresh. */
  recordSuccess(client: string): void {
    this.records.delete(client);
  }

  /** The wait imposed after the n-th consecutive failure. */
  delayAfter(failures: number): number {
    if (failures < this.freeFailures) return 0;
    const doublings = Math.min(failures - this.freeFailures, 30);
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** doublings);
  }

  /** How many addresses are tracked now. */
  get size(): number {
    return this.records.size;
  }

  private prune(at: number): void {
    for (const [client, record] of this.records) {
      if (this.records.size > this.maxTracked || at - record.lastFailureAt > this.forgetAfterMs) this.records.delete(client);
      else break;
    }
  }
}

/** Expands a valid IPv6 address to its eight groups (the URL parser first turns a dotted IPv4 tail into hex). */
function ipv6Groups(address: string): number[] {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head, rest] = canonical.includes('::') ? (canonical.split('::') as [string, string]) : [canonical, ''];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = parse(rest);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The throttle's key for a client address. One IPv6 host usually owns a whole /64, so IPv6
 * addresses are grouped by their /64 prefix; otherwise an attacker would get 2^64 fresh buckets.
 * An unknown address (no socket, e.g. in-process requests) shares one bucket.
 */
export function throttleKey(address: string | null | undefined): string {
  if (!address) return 'unknown';
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return address;
  const groups = ipv6Groups(bare);
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
