/**
 * The local operator's way in when no CONSOLE_PASSWORD is set (`support-agent console` on a
 * loopback address, as notebook servers do it): a random link printed once on the terminal that
 * started the console. It opens one session, from this machine only, and is then spent; the
 * password form stays closed (its password is random and never shown).
 */
import type { ConsoleContext } from './context.ts';
import { newToken, type SessionStore, startSession, tokensMatch } from './auth.ts';
import { html } from './html.ts';
import { renderPage } from './layout.ts';
import { hostOfAddress, isLoopbackHostname } from '../net/host-names.ts';

export class OneTimeLogin {
  readonly token = newToken();
  private spent = false;

  /** True once, for the right token; a wrong token leaves the link usable. */
  redeem(given: string): boolean {
    if (this.spent || !tokensMatch(this.token, given)) return false;
    this.spent = true;
    return true;
  }
}

export const ONE_TIME_LOGIN_PATH = '/login/once';

/** GET /login/once/:token: a session for the first visit from this machine with the right token. */
export function oneTimeLoginRoute(link: OneTimeLogin, sessions: SessionStore) {
  return async (c: ConsoleContext): Promise<Response> => {
    const client = c.get('request').client;
    const local = client !== null && isLoopbackHostname(hostOfAddress(client));
    if (!local || !link.redeem(c.req.param('token') ?? '')) {
      c.get('runtime').logger.warn('console one-time login refused', { local });
      const title = 'This login link does not work';
      const body = html`<h1>${title}</h1><p>It was already used, is not the one the console printed, or was opened from another
machine. Restart <code>support-agent console</code> for a new link, or set CONSOLE_PASSWORD.</p>`;
      return c.html(renderPage({ title, section: null, session: null, body }), 403);
    }
    await startSession(c, sessions);
    c.get('runtime').logger.info('console login (one-time link)');
    return c.redirect('/drafts', 303);
  };
}
