/**
 * Operator login: one shared password, in-memory sessions, and the middleware that keeps every
 * page but the login form (and the stylesheet) behind it. The password and session ids never
 * reach a log line.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { ConsoleEnv, Session } from './context.ts';

export const SESSION_COOKIE = 'sa_session';

const HOUR = 3_600_000;

/**
 * Hashing both sides first gives equal-length buffers, so `timingSafeEqual` neither throws nor
 * leaks the password's length through timing.
 */
export function passwordMatches(expected: string, given: string): boolean {
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(given, 'utf8').digest();
  return timingSafeEqual(a, b);
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Constant-time comparison of two tokens of any length. */
export function tokensMatch(expected: string, given: string): boolean {
  return passwordMatches(expected, given);
}

export interface SessionStoreOptions {
  /** A session unused for this long ends (default 8 h). */
  idleMs?: number;
  /** No session outlives this (default 24 h). */
  maxAgeMs?: number;
  /** Oldest sessions are dropped beyond this many, so repeated logins cannot grow memory. */
  maxSessions?: number;
  now?: () => number;
}

/** Sessions live in this process only: restarting the console logs everyone out, which is fine for one team. */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly idleMs: number;
  private readonly maxAgeMs: number;
  private readonly maxSessions: number;
  private readonly now: () => number;

  constructor(options: SessionStoreOptions = {}) {
    this.idleMs = options.idleMs ?? 8 * HOUR;
    this.maxAgeMs = options.maxAgeMs ?? 24 * HOUR;
    this.maxSessions = options.maxSessions ?? 200;
    this.now = options.now ?? Date.now;
  }

  create(): Session {
    const at = this.now();
    const session: Session = { id: newToken(), csrfToken: newToken(), createdAt: at, lastSeenAt: at };
    this.sessions.set(session.id, session);
    while (this.sessions.size > this.maxSessions) {
      const oldest = this.sessions.keys().next();
      if (oldest.done) break;
      this.sessions.delete(oldest.value);
    }
    return session;
  }

  get(id: string | undefined): Session | null {
    if (!id) return null;
    const session = this.sessions.get(id);
    if (!session) return null;
    const at = this.now();
    if (at - session.lastSeenAt > this.idleMs || at - session.createdAt > this.maxAgeMs) {
      this.sessions.delete(id);
      return null;
    }
    session.lastSeenAt = at;
    return session;
  }

  destroy(id: string | undefined): void {
    if (id) this.sessions.delete(id);
  }
}

/**
 * Slows password guessing: after `limit` failures within `windowMs` every attempt is refused until
 * the window has passed. Process-wide rather than per address: behind a proxy every caller shares one.
 */
export class LoginThrottle {
  private failures: number[] = [];

  constructor(
    private readonly limit = 20,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  blocked(): boolean {
    const since = this.now() - this.windowMs;
    this.failures = this.failures.filter((t) => t > since);
    return this.failures.length >= this.limit;
  }

  recordFailure(): void {
    this.failures.push(this.now());
  }
}

export function cookieIsSecure(c: Context): boolean {
  return new URL(c.req.url).protocol === 'https:';
}

export function startSession(c: Context<ConsoleEnv>, sessions: SessionStore): Session {
  sessions.destroy(getCookie(c, SESSION_COOKIE));
  const session = sessions.create();
  setCookie(c, SESSION_COOKIE, session.id, { httpOnly: true, sameSite: 'Strict', path: '/', secure: cookieIsSecure(c) });
  return session;
}

export function endSession(c: Context<ConsoleEnv>, sessions: SessionStore): void {
  sessions.destroy(getCookie(c, SESSION_COOKIE));
  deleteCookie(c, SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict', secure: cookieIsSecure(c) });
}

/** Only a path on this site may be a post-login destination (no open redirect). */
export function safeNextPath(next: string | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.includes('\\')) return '/drafts';
  return next;
}

/**
 * Lets a request through only with a live session. A page request without one is sent to the
 * login form (and back afterwards); anything else gets a plain 401.
 */
export function requireLogin(sessions: SessionStore): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const session = sessions.get(getCookie(c, SESSION_COOKIE));
    if (!session) {
      const url = new URL(c.req.url);
      const wantsPage = c.req.method === 'GET' && (c.req.header('accept') ?? '').includes('text/html');
      if (wantsPage) return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
      return c.text('login required', 401);
    }
    c.set('session', session);
    await next();
  };
}
