/**
 * The login form and logout. A failed login is logged without what was typed; the password and
 * the session id never appear in a log line or a URL.
 */
import { getCookie } from 'hono/cookie';
import { z } from 'zod';
import { endSession, passwordMatches, safeNextPath, SESSION_COOKIE, type SessionStore, startSession } from '../auth.ts';
import type { ConsoleContext } from '../context.ts';
import { clearLoginToken, issueLoginToken, loginTokenValid } from '../csrf.ts';
import { html } from '../html.ts';
import { readNotice, renderPage } from '../layout.ts';
import { LoginThrottle, throttleKey } from '../login-throttle.ts';

const nextQuery = z.object({ next: z.string().max(2000).optional() }).loose();
const loginForm = z
  .object({
    password: z.string().max(1000),
    _login: z.string().max(200),
    next: z.string().max(2000).optional(),
  })
  .loose();

function loginPage(c: ConsoleContext, next: string, error: string | null, status: 200 | 400 | 401 | 403 | 429): Response {
  const token = issueLoginToken(c);
  const body = html`
<section class="login" aria-labelledby="login-title">
  <h1 id="login-title">Log in to the support console</h1>
  ${error ? html`<p class="notice notice-error" role="alert" id="login-error">${error}</p>` : ''}
  <form method="post" action="/login">
    <input type="hidden" name="_login" value="${token}">
    <input type="hidden" name="next" value="${next}">
    <label for="password">Operator password</label>
    <input type="password" id="password" name="password" required autocomplete="current-password" autofocus
      ${error ? html`aria-invalid="true" aria-describedby="login-error"` : ''}>
    <div class="actions"><button type="submit" class="primary">Log in</button></div>
  </form>
</section>`;
  return c.html(renderPage({ title: 'Log in', section: null, session: null, notice: readNotice(c), body }), status);
}

export function loginRoutes(password: string, sessions: SessionStore, throttle = new LoginThrottle()) {
  return {
    async show(c: ConsoleContext): Promise<Response> {
      const parsed = nextQuery.safeParse(c.req.query());
      const next = safeNextPath(parsed.success ? parsed.data.next : undefined);
      if (await sessions.get(getCookie(c, SESSION_COOKIE))) return c.redirect(next, 303);
      return loginPage(c, next, null, 200);
    },

    async submit(c: ConsoleContext): Promise<Response> {
      const parsed = loginForm.safeParse(await c.req.parseBody());
      if (!parsed.success) return loginPage(c, '/drafts', 'The login form was incomplete. Please try again.', 400);
      const next = safeNextPath(parsed.data.next);
      if (!loginTokenValid(c, parsed.data._login)) return loginPage(c, next, 'The login form had expired. Please try again.', 403);
      // From here to recordFailure nothing awaits, so parallel attempts cannot all pass one check.
      const client = throttleKey(c.get('request').client);
      const decision = throttle.check(client);
      if (!decision.allowed) {
        const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
        c.header('Retry-After', String(seconds));
        c.get('runtime').logger.debug('console login attempt refused: too many failures from this address');
        return loginPage(c, next, `Too many failed attempts from your address. Try again in ${seconds} s.`, 429);
      }
      if (!passwordMatches(password, parsed.data.password)) {
        throttle.recordFailure(client);
        c.get('runtime').logger.warn('console login refused: wrong password');
        return loginPage(c, next, 'That password is not correct.', 401);
      }
      throttle.recordSuccess(client);
      await startSession(c, sessions);
      clearLoginToken(c);
      c.get('runtime').logger.info('console login');
      return c.redirect(next, 303);
    },

    async logout(c: ConsoleContext): Promise<Response> {
      await endSession(c, sessions);
      return c.redirect('/login?notice=logged-out', 303);
    },
  };
}
