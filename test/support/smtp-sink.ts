/**
 * A real SMTP server on loopback that accepts the product's outgoing replies and keeps them.
 *
 * Plain SMTP (STARTTLS disabled), AUTH PLAIN/LOGIN accepted over plaintext. Authentication is optional
 * unless `requireAuth`; credentials that are offered must match either way. A message is in
 * `messages` (parsed with mailparser) before the server sends its 250, so once the client's
 * `sendMail` resolves the message is already visible.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { Arrivals } from './arrivals.ts';

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  /** Lower-case header names; first occurrence; value unfolded (CRLF before whitespace removed), otherwise raw (encoded words not decoded). */
  headers: Map<string, string>;
  /** Decoded subject ('' when absent). */
  subject: string;
  /** The Message-ID header including angle brackets, or null. */
  messageId: string | null;
  /** The plain-text body as mailparser sees it ('' when absent). */
  text: string;
  /** The HTML body as mailparser sees it ('' when absent). */
  html: string;
  /** The id the server reported in its `250 Ok: queued as <id>` reply. */
  queuedAs: string;
  /** The username that authenticated the session, or null. */
  authenticatedUser: string | null;
}

export interface SmtpSink {
  host: string;
  port: number;
  user: string;
  password: string;
  messages: ReceivedMail[];
  /** Resolves when `count` messages in total have been accepted (event-driven). */
  waitForMessages(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Make the next n transactions fail at end of DATA with this SMTP code (e.g. 451 temporary, 550 permanent). */
  failNext(n: number, code: number, message?: string): void;
  /**
   * Replace the id the server reports in its 250 reply (`250 Ok: queued as <id>`), as some providers
   * report their own message id. null restores the default (a fresh random queue id per message).
   */
  setQueuedAs(id: string | null): void;
  /**
   * Holds the next transaction after its DATA has been received, before the server answers:
   * `received` resolves then, and nothing is answered (or recorded) until `release()`. A send
   * "in flight", for tests of what happens meanwhile.
   */
  holdNext(): { received: Promise<void>; release(): void };
  /** Number of DATA transactions the sink refused because of `failNext`. */
  readonly rejectedCount: number;
  close(): Promise<void>;
}

export interface SmtpSinkOptions {
  requireAuth?: boolean;
  user?: string;
  password?: string;
  /** Also offer XOAUTH2; a login succeeds when this says the bearer token is valid for the user. */
  acceptAccessToken?: (user: string, token: string) => boolean;
}

const MAX_SIZE = 30 * 1024 * 1024;

interface SmtpError extends Error {
  responseCode: number;
}

function smtpError(code: number, message: string): SmtpError {
  return Object.assign(new Error(message), { responseCode: code });
}

/** Header block of a raw message, unfolded, first value per lower-case name. */
function parseHeaderBlock(raw: Buffer): Map<string, string> {
  const text = raw.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  const block = end === -1 ? text : text.slice(0, end);
  const headers = new Map<string, string>();
  for (const line of block.replace(/\r?\n(?=[ \t])/g, '').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  return headers;
}

function envelopeOf(session: SMTPServerSession): ReceivedMail['envelope'] {
  const { mailFrom, rcptTo } = session.envelope;
  return { from: mailFrom === false ? '' : mailFrom.address, to: rcptTo.map((r) => r.address) };
}

export async function startSmtpSink(options?: SmtpSinkOptions): Promise<SmtpSink> {
  const requireAuth = options?.requireAuth ?? false;
  const user = options?.user ?? 'sink-user';
  const password = options?.password ?? 'sink-password';
  const arrivals = new Arrivals<ReceivedMail>('SMTP sink', 'message(s)');
  const messages = arrivals.items;
  const failures: Array<{ code: number; message: string }> = [];
  let queuedAsOverride: string | null = null;
  const holds: Array<{ arrived: () => void; released: Promise<void> }> = [];
  let rejectedCount = 0;
  let closed = false;

  const server = new SMTPServer({
    logger: false,
    secure: false,
    disabledCommands: ['STARTTLS'],
    authMethods: options?.acceptAccessToken ? ['PLAIN', 'LOGIN', 'XOAUTH2'] : ['PLAIN', 'LOGIN'],
    authOptional: !requireAuth,
    allowInsecureAuth: true,
    size: MAX_SIZE,
    // close() destroys lingering connections after this grace period.
    closeTimeout: 250,
    onAuth(auth, _session, callback) {
      if ((auth.method === 'PLAIN' || auth.method === 'LOGIN') && auth.username === user && auth.password === password) {
        callback(null, { user: auth.username });
        return;
      }
      if (auth.method === 'XOAUTH2' && options?.acceptAccessToken) {
        if (auth.username && auth.accessToken && options.acceptAccessToken(auth.username, auth.accessToken)) {
          callback(null, { user: auth.username });
          return;
        }
        // RFC 7628: the JSON challenge that tells the client to get a new token and try again.
        callback(null, { data: { status: '401', schemes: 'bearer', scope: 'https://mail.google.com/' } });
        return;
      }
      callback(smtpError(535, 'Error: authentication credentials invalid'));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const hold = holds.shift();
        if (hold) {
          hold.arrived();
          await hold.released;
        }
        if (stream.sizeExceeded) {
          callback(smtpError(552, `Error: message exceeds fixed maximum message size ${MAX_SIZE}`));
          return;
        }
        const failure = failures.shift();
        if (failure !== undefined) {
          rejectedCount += 1;
          callback(smtpError(failure.code, failure.message));
          return;
        }
        const raw = Buffer.concat(chunks);
        const queuedAs = queuedAsOverride ?? randomBytes(6).toString('hex').toUpperCase();
        simpleParser(raw)
          .then((parsed) => {
            arrivals.push({
              envelope: envelopeOf(session),
              raw,
              headers: parseHeaderBlock(raw),
              subject: parsed.subject ?? '',
              messageId: parsed.messageId ?? null,
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              queuedAs,
              authenticatedUser: typeof session.user === 'string' ? session.user : null,
            });
            callback(null, `Ok: queued as ${queuedAs}`);
          })
          .catch((error: unknown) => {
            callback(smtpError(554, `Error: sink could not parse the message: ${String(error)}`));
          });
      });
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Errors on individual connections (client resets) must not crash the test process.
  server.on('error', () => {});
  const { port } = server.server.address() as AddressInfo;

  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    messages,
    get rejectedCount() {
      return rejectedCount;
    },
    waitForMessages(count, timeoutMs) {
      return arrivals.waitFor(count, timeoutMs);
    },
    failNext(n, code, message) {
      if (!Number.isInteger(code) || code < 400 || code > 599) throw new Error(`failNext needs a 4xx or 5xx SMTP code, got ${code}`);
      const text = message ?? (code < 500 ? 'Temporary failure, try again later' : 'Permanent failure, message rejected');
      for (let i = 0; i < n; i += 1) failures.push({ code, message: text });
    },
    holdNext() {
      let arrived!: () => void;
      let release!: () => void;
      const received = new Promise<void>((resolve) => (arrived = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ arrived, released });
      return { received, release };
    },
    setQueuedAs(id) {
      queuedAsOverride = id;
    },
    async close() {
      if (closed) return;
      closed = true;
      arrivals.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
