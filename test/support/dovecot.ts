/**
 * A real Dovecot IMAP + LMTP server per test file, for integration tests of the IMAP poller.
 *
 * Composes the two halves of the harness: the process (test/support/dovecot-process.ts: config, free
 * loopback ports, start, stop, restart, destroy, the watchdog that cleans up after a killed test process)
 * and the mail in it (test/support/dovecot-mailbox.ts: deliver, append, list, UIDVALIDITY).
 */
import { DovecotMailboxes } from './dovecot-mailbox.ts';
import { launchDovecot, type DovecotUser } from './dovecot-process.ts';

export type { DovecotUser } from './dovecot-process.ts';

export interface DovecotServer {
  host: string;
  imapPort: number;
  lmtpPort: number;
  users: DovecotUser[];
  dir: string;
  /** Deliver a raw RFC 5322 message to a user's INBOX over LMTP (real delivery path). */
  deliver(user: string, raw: string | Buffer, envelopeFrom?: string): Promise<void>;
  /** Append over IMAP to a folder (creating it if missing), optional flags like ['\\Seen']. Returns the UID. */
  append(user: string, folder: string, raw: string | Buffer, flags?: string[]): Promise<number>;
  /** UIDs and raw bytes currently in a folder (for assertions), in UID order. */
  list(user: string, folder: string): Promise<Array<{ uid: number; flags: string[]; raw: Buffer }>>;
  /** Folder's UIDVALIDITY (as an IMAP client sees it). */
  uidValidity(user: string, folder: string): Promise<bigint>;
  /**
   * Force a new UIDVALIDITY on a folder while keeping its messages (as happens when a server rebuilds its
   * index). By default the messages are also renumbered: each is copied to a fresh UID (content, flags and
   * internal date kept) and the original expunged, so no old UID stays valid. `{ keepUids: true }` changes
   * only the UIDVALIDITY. Sessions that have the folder selected may be disconnected by Dovecot.
   * Returns the new UIDVALIDITY.
   */
  changeUidValidity(user: string, folder: string, options?: { keepUids?: boolean }): Promise<bigint>;
  /** Kill every IMAP session of a user (all users if omitted) with `doveadm kick`; the server stays up. */
  dropConnections(user?: string): Promise<void>;
  /** Stop the server (mail stays on disk). */
  stop(): Promise<void>;
  /** Start it again on the SAME ports; resolves once IMAP and LMTP greet. */
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stop and remove the temp dir. */
  destroy(): Promise<void>;
  /** Logged-in sessions as Dovecot's anvil lists them (`doveadm who -1`). */
  sessions(): Promise<Array<{ user: string; protocol: string; pid: number }>>;
  /** The last lines of dovecot.log, for diagnosing a failing test. */
  logTail(lines?: number): Promise<string>;
}

export const DEFAULT_DOVECOT_USERS: readonly DovecotUser[] = Object.freeze([
  { user: 'support@acme.example', password: 'support-pass' },
  { user: 'other@acme.example', password: 'other-pass' },
]);

/**
 * `oauth2IntrospectionUrl` adds XOAUTH2 and OAUTHBEARER logins, each token checked at that
 * RFC 7662 introspection endpoint (test/support/oauth2-server.ts); passwords keep working.
 */
export async function startDovecot(options: { users?: DovecotUser[]; oauth2IntrospectionUrl?: string } = {}): Promise<DovecotServer> {
  const server = await launchDovecot(
    (options.users ?? DEFAULT_DOVECOT_USERS).map((u) => ({ ...u })),
    options.oauth2IntrospectionUrl ? { oauth2IntrospectionUrl: options.oauth2IntrospectionUrl } : {},
  );
  const mailboxes = new DovecotMailboxes(server);
  return {
    host: server.host,
    // Chosen on the first start and kept by restarts; read through, as the process holds them.
    get imapPort() {
      return server.imapPort;
    },
    get lmtpPort() {
      return server.lmtpPort;
    },
    users: server.users,
    dir: server.dir,
    deliver: (user, raw, envelopeFrom) => mailboxes.deliver(user, raw, envelopeFrom),
    append: (user, folder, raw, flags) => mailboxes.append(user, folder, raw, flags),
    list: (user, folder) => mailboxes.list(user, folder),
    uidValidity: (user, folder) => mailboxes.uidValidity(user, folder),
    changeUidValidity: (user, folder, changeOptions) => mailboxes.changeUidValidity(user, folder, changeOptions),
    dropConnections: (user) => server.dropConnections(user),
    stop: () => server.stop(),
    start: () => server.start(),
    restart: () => server.restart(),
    destroy: () => server.destroy(),
    sessions: () => server.sessions(),
    logTail: (lines) => server.logTail(lines),
  };
}
