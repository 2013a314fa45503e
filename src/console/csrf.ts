/**
 * Cross-site request forgery defences. The session cookie is SameSite=Strict already; on top of
 * that every form carries the session's token in a hidden field and every POST must present it.
 * The login form, which has no session yet, uses a double-submit cookie instead. Bull Board's own
 * API calls (fetch with JSON, no form) are held to a same-origin check.
 */
import type { MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { cookieIsSecure, newToken, tokensMatch } from './auth.ts';
import type { ConsoleContext, ConsoleEnv, Session } from './context.ts';
import { html, type SafeHtml } from './html.ts';

const CSRF_FIELD = '_csrf';
const LOGIN_COOKIE = 'sa_login';

export function csrfField(session: Session): SafeHtml {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${session.csrfToken}">`;
}

const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function forbidden(c: ConsoleContext, why: string): Response {
  return c.text(`Forbidden: ${why}. Reload the page and try again.`, 403);
}

/**
 * A browser's Origin header, when sent, must be this site's: the origin the request was addressed
 * to (behind a trusted proxy, the one the proxy was asked for) or CONSOLE_PUBLIC_URL's. The host
 * check has already refused any Host the console does not answer to, so a rebinding page cannot
 * make the two match.
 */
function originAllowed(c: ConsoleContext, required: boolean): boolean {
  const origin = c.req.header('origin');
  if (origin) {
    const view = c.get('request');
    return origin === view.origin || (view.publicOrigin !== null && origin === view.publicOrigin);
  }
  if (c.req.header('sec-fetch-site')) return c.req.header('sec-fetch-site') === 'same-origin';
  return !required;
}

/** Every state-changing form post must carry the session's token. Runs after `requireLogin`. */
export function verifyCsrf(): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    if (!UNSAFE_METHODS.has(c.req.method)) return next();
    if (!originAllowed(c, false)) return forbidden(c, 'the request came from another site');
    const type = c.req.header('content-type') ?? '';
    if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data')) {
      return forbidden(c, 'the console only accepts its own forms');
    }
    const body = await c.req.parseBody();
    const token = body[CSRF_FIELD];
    if (typeof token !== 'string' || !tokensMatch(c.get('session').csrfToken, token)) {
      return forbidden(c, 'the form token is missing or stale');
    }
    return next();
  };
}

/** For Bull Board's fetch-based API: state changes only from pages of this origin. */
export function sameOriginOnly(): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    if (UNSAFE_METHODS.has(c.req.method) && !originAllowed(c, true)) return forbidden(c, 'the request came from another site');
    return next();
  };
}

/** The login form's token: the same random value in a cookie and in the form. */
export function issueLoginToken(c: ConsoleContext): string {
  const token = newToken();
  setCookie(c, LOGIN_COOKIE, token, { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 3600, secure: cookieIsSecure(c) });
  return token;
}

export function loginTokenValid(c: ConsoleContext, given: unknown): boolean {
  const expected = getCookie(c, LOGIN_COOKIE);
  if (!expected || typeof given !== 'string') return false;
  if (!originAllowed(c, false)) return false;
  return tokensMatch(expected, given);
}

/** Once logged in, the login token has served its purpose. */
export function clearLoginToken(c: ConsoleContext): void {
  deleteCookie(c, LOGIN_COOKIE, { path: '/', httpOnly: true, sameSite: 'Strict', secure: cookieIsSecure(c) });
}
