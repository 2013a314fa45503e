/**
 * SMTP through nodemailer. Failures are sorted once: a 5xx answer is permanent, anything else
 * (4xx, connection trouble) is worth another attempt.
 */
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { AppError } from '../errors.ts';
import type { AccessTokenSource } from '../net/oauth2-tokens.ts';

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  rejectUnauthorized: boolean;
  user: string | undefined;
  password: string | undefined;
  /** XOAUTH2 as `user` instead of the password (MAIL_AUTH=oauth2). */
  oauth2?: AccessTokenSource | undefined;
}

export interface SendResult {
  /** A Message-ID the server says it used instead of ours, if it reported one. */
  serverMessageId: string | null;
}

export interface MailSender {
  send(message: Mail.Options): Promise<SendResult>;
  close(): void;
}

export function createSmtpSender(settings: SmtpSettings): MailSender {
  const transport = nodemailer.createTransport({
    host: settings.host,
    port: settings.port,
    secure: settings.secure,
    ignoreTLS: false,
    tls: { rejectUnauthorized: settings.rejectUnauthorized },
    ...(settings.user
      ? {
          auth: settings.oauth2 ? { type: 'OAuth2' as const, user: settings.user } : { user: settings.user, pass: settings.password ?? '' },
        }
      : {}),
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  });
  const { oauth2 } = settings;
  if (oauth2) {
    // nodemailer asks here for each login's token, with `renew` set after the server refused the
    // previous one; it then retries the login once with the token given.
    let last: string | null = null;
    transport.set('oauth2_provision_cb', (_user: string, renew: boolean, callback: (error: Error | null, token?: string) => void) => {
      if (renew && last) oauth2.invalidate(last);
      oauth2.accessToken().then(
        (token) => {
          last = token;
          callback(null, token);
        },
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    });
  }
  return {
    async send(message) {
      try {
        const info = (await transport.sendMail(message)) as { response?: string };
        const reported = /<([^<>\s@]+@[^<>\s@]+)>/.exec(info.response ?? '');
        return { serverMessageId: reported ? `<${reported[1]}>` : null };
      } catch (error) {
        const code = (error as { responseCode?: number }).responseCode;
        const detail = (error as { response?: string }).response;
        const message = `SMTP ${code ?? 'connection'} error: ${(detail ?? (error instanceof Error ? error.message : String(error))).slice(0, 200)}`;
        throw new AppError(smtpFailureCode(error), message, { cause: error, ...(detail ? { detail } : {}) });
      }
    },
    close: () => transport.close(),
  };
}

/** nodemailer error codes raised before the server could have taken the message. */
const BEFORE_DATA = new Set(['EAUTH', 'EENVELOPE', 'EDNS', 'ETLS', 'EREQUIRETLS', 'EMESSAGE', 'ESTREAM', 'EOAUTH2', 'ECONFIG']);
/** Socket errors of a connection that was never made. */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/**
 * Sorts an SMTP failure by what it says about the message: the server answered with a refusal
 * (5xx permanent, 4xx try later), the message cannot have reached it (no connection, a refused
 * envelope or login), or the connection died without an answer while the message may already
 * have been accepted: sending again could deliver it twice, so that is left to a person.
 */
export function smtpFailureCode(error: unknown): 'SMTP_REJECTED' | 'SMTP_FAILED' | 'SMTP_OUTCOME_UNKNOWN' {
  const e = error as { responseCode?: number; code?: string; originalCode?: string; command?: string };
  if (typeof e.responseCode === 'number') return e.responseCode >= 500 ? 'SMTP_REJECTED' : 'SMTP_FAILED';
  if (e.code && BEFORE_DATA.has(e.code)) return 'SMTP_FAILED';
  const socketCode = e.originalCode ?? e.code;
  if (socketCode && NEVER_CONNECTED.has(socketCode)) return 'SMTP_FAILED';
  // Connecting and the greeting come before anything is handed over.
  if (error instanceof Error && /greeting never received|connection timeout/i.test(error.message)) return 'SMTP_FAILED';
  if (e.command === 'API' || e.command === 'MAIL FROM' || e.command === 'RCPT TO' || e.command?.startsWith('AUTH')) return 'SMTP_FAILED';
  return 'SMTP_OUTCOME_UNKNOWN';
}
