/**
 * SMTP through nodemailer. Failures are sorted once: a 5xx answer is permanent, anything else
 * (4xx, connection trouble) is worth another attempt.
 */
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { AppError } from '../errors.ts';

export interface SmtpSettings {
  host: string;
  port: number;
  secure: boolean;
  rejectUnauthorized: boolean;
  user: string | undefined;
  password: string | undefined;
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
    ...(settings.user ? { auth: { user: settings.user, pass: settings.password ?? '' } } : {}),
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
  });
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
        throw new AppError(code !== undefined && code >= 500 ? 'SMTP_REJECTED' : 'SMTP_FAILED', message, { cause: error, ...(detail ? { detail } : {}) });
      }
    },
    close: () => transport.close(),
  };
}
