/**
 * Operator login: one shared password, sessions in the database, and the middleware that keeps every
 * page but the login form (and the stylesheet) behind it. The password and session ids never
 * reach a log line.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import {
  deleteConsoleSession,
  findConsoleSession,
  insertConsoleSession,
  pruneConsoleSessions,
  touchConsoleSession,
} from '../store/console-sessions.ts';
import type { Db } from '../store/database.ts';
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
  /** Oldest sessions are dropped beyond this many, so repeated logins cannot grow the table. */
  maxSessions?: number;
  now?: () => number;
}

/** Whether a session has ended by time: unused for `idleMs`, or older than `maxAgeMs`. */
export function sessionExpired(session: Pick<Session, 'createdAt' | 'lastSeenAt'>, at: number, idleMs: number, maxAgeMs: number): boolean {
  return at - session.lastSeenAt > idleMs || at - session.createdAt > maxAgeMs;
}

/** A request seen within this long of the last recorded one does not write `lastSeenAt` again. */
const TOUCH_EVERY_MS = 60_000;

const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
const passwordCheck = (password: string, token: string): string => createHmac('sha256', password).update(token, 'utf8').digest('hex');

/**
 * Console sessions in the database (`ConsoleSession`): they survive a restart and are shared by
 * every console process. The cookie's token is stored only as a hash.
 */
export class SessionStore {
  private readonly idleMs: number;
  private readonly maxAgeMs: number;
  private readonly maxSessions: number;
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    private readonly password: string,
    options: SessionStoreOptions = {},
  ) {
    this.idleMs = options.idleMs ?? 8 * HOUR;
    this.maxAgeMs = options.maxAgeMs ?? 24 * HOUR;
    this.maxSessions = options.maxSessions ?? 200;
    this.now = options.now ?? Date.now;
  }

  async create(): Promise<Session> {
    const at = this.now();
    const session: Session = { id: newToken(), csrfToken: newToken(), createdAt: at, lastSeenAt: at };
    await insertConsoleSession(this.db, {
      tokenHash: hashToken(session.id),
      csrfToken: session.csrfToken,
      passwordCheck: passwordCheck(this.password, session.id),
      createdAt: new Date(at),
      lastSeenAt: new Date(at),
    });
    await this.prune(at);
    return session;
  }

  async get(id: string | undefined): Promise<Session | null> {
    if (!id) return null;
    const tokenHash = hashToken(id);
    const row = await findConsoleSession(this.db, tokenHash);
    if (!row) return null;
    const session: Session = { id, csrfToken: row.csrfToken, createdAt: row.createdAt.getTime(), lastSeenAt: row.lastSeenAt.getTime() };
    const at = this.now();
    if (sessionExpired(session, at, this.idleMs, this.maxAgeMs) || !tokensMatch(row.passwordCheck, passwordCheck(this.password, id))) {
      await deleteConsoleSession(this.db, tokenHash);
      return null;
    }
    if (at - session.lastSeenAt >= TOUCH_EVERY_MS) {
      await touchConsoleSession(this.db, tokenHash, new Date(at));
      session.lastSeenAt = at;
    }
    return session;
  }

  async destroy(id: string | undefined): Promise<void> {
    if (id) await deleteConsoleSession(this.db, hashToken(id));
  }

  /** Ends sessions that have expired, and the oldest beyond `maxSessions`. */
  private async prune(at: number): Promise<void> {
    await pruneConsoleSessions(this.db, {
      idleBefore: new Date(at - this.idleMs),
      createdBefore: new Date(at - this.maxAgeMs),
      keep: this.maxSessions,
    });
  }
}

/** Cookies are `Secure` when the console is reached over HTTPS (CONSOLE_PUBLIC_URL, or a trusted proxy says so). */
export function cookieIsSecure(c: Context<ConsoleEnv>): boolean {
  return c.get('request').secureCookies;
}

export async function startSession(c: Context<ConsoleEnv>, sessions: SessionStore): Promise<Session> {
  await sessions.destroy(getCookie(c, SESSION_COOKIE));
  const session = await sessions.create();
  setCookie(c, SESSION_COOKIE, session.id, { httpOnly: true, sameSite: 'Strict', path: '/', secure: cookieIsSecure(c) });
  return session;
}

export async function endSession(c: Context<ConsoleEnv>, sessions: SessionStore): Promise<void> {
  await sessions.destroy(getCookie(c, SESSION_COOKIE));
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
/** `model`: the line naming the model drafts are made with, shown in every page's header. */
export function requireLogin(sessions: SessionStore, model?: string): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const session = await sessions.get(getCookie(c, SESSION_COOKIE));
    if (!session) {
      const url = new URL(c.req.url);
      const wantsPage = c.req.method === 'GET' && (c.req.header('accept') ?? '').includes('text/html');
      if (wantsPage) return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
      return c.text('login required', 401);
    }
    if (model) session.model = model;
    c.set('session', session);
    await next();
  };
}
