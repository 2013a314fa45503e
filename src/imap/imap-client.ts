import { ImapFlow } from 'imapflow';

/** What it takes to log in to the mailbox over IMAP. */
export interface ImapLogin {
  host: string;
  port: number;
  secure: boolean;
  rejectUnauthorized: boolean;
  user: string;
  password: string;
}

/**
 * A new imapflow client. Always a fresh one: an imapflow client cannot be reused once its
 * connection has closed. Its own logger is off so that nothing it logs can carry credentials.
 */
export function createImapClient(login: ImapLogin, options: { idle: boolean }): ImapFlow {
  return new ImapFlow({
    host: login.host,
    port: login.port,
    secure: login.secure,
    auth: { user: login.user, pass: login.password },
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
