import { ImapFlow } from 'imapflow';
import type { AccessTokenSource } from '../net/oauth2-tokens.ts';

/** What it takes to log in to the mailbox over IMAP: a password, or OAuth2 (XOAUTH2) tokens. */
export interface ImapLogin {
  host: string;
  port: number;
  secure: boolean;
  rejectUnauthorized: boolean;
  user: string;
  /** Used when `oauth2` is absent. */
  password?: string;
  /** XOAUTH2 with a fresh access token per connection (MAIL_AUTH=oauth2). */
  oauth2?: AccessTokenSource;
}

/**
 * A new imapflow client. Always a fresh one: an imapflow client cannot be reused once its
 * connection has closed. Its own logger is off so that nothing it logs can carry credentials.
 * With OAuth2 the access token is fetched (or reused) first; a login the server refuses drops
 * that token, so the caller's next attempt logs in with a refreshed one.
 */
export async function createImapClient(login: ImapLogin, options: { idle: boolean }): Promise<ImapFlow> {
  const { oauth2 } = login;
  if (!oauth2) return newClient(login, { user: login.user, pass: login.password ?? '' }, options);
  const accessToken = await oauth2.accessToken();
  const client = newClient(login, { user: login.user, accessToken }, options);
  const connect = client.connect.bind(client);
  client.connect = async () => {
    try {
      await connect();
    } catch (error) {
      // imapflow marks a NO to AUTHENTICATE with `authenticationFailed`; a revoked or expired
      // token looks the same as a wrong one, so the token goes either way.
      if ((error as { authenticationFailed?: boolean }).authenticationFailed) oauth2.invalidate(accessToken);
      throw error;
    }
  };
  return client;
}

function newClient(
  login: ImapLogin,
  auth: { user: string; pass: string } | { user: string; accessToken: string },
  options: { idle: boolean },
): ImapFlow {
  return new ImapFlow({
    host: login.host,
    port: login.port,
    secure: login.secure,
    auth,
    tls: { rejectUnauthorized: login.rejectUnauthorized },
    logger: false,
    disableAutoIdle: !options.idle,
    // imapflow waits 15 s of quiet before it enters IDLE; mail arriving in that gap would wait for
    // the periodic check. Entering IDLE at once keeps delivery-to-draft latency under a second.
    autoIdleDelay: 200,
    // IDLE is restarted now and then: some servers drop an IDLE that lasts too long without a word.
    maxIdleTime: 5 * 60_000,
  });
}
