/**
 * Renders a stored draft as an RFC 5322 message with nodemailer's composer, for the IMAP Drafts
 * folder and for the audit copy. Sending uses the same fields through the SMTP transport. With an
 * HTML part the message is multipart/alternative (text first, then HTML), as mail clients send it.
 */
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';

export interface DraftForMime {
  fromAddress: string;
  fromName: string;
  to: string;
  /** Copied recipients (never Bcc: the agent sends no blind copies). */
  cc?: readonly string[];
  subject: string;
  /** The plain-text part. */
  body: string;
  /** The HTML part, when the reply has one. */
  html?: string;
  messageId: string;
  inReplyTo: string | null;
  references: string[];
  headers: Record<string, string>;
  date?: Date;
}

/** nodemailer message options for a draft: shared by the composer and the SMTP transport. */
export function mailOptions(draft: DraftForMime): Mail.Options {
  return {
    from: { name: draft.fromName, address: draft.fromAddress },
    to: draft.to,
    ...(draft.cc && draft.cc.length > 0 ? { cc: [...draft.cc] } : {}),
    subject: draft.subject,
    text: draft.body,
    ...(draft.html ? { html: draft.html } : {}),
    messageId: draft.messageId,
    ...(draft.inReplyTo ? { inReplyTo: draft.inReplyTo } : {}),
    ...(draft.references.length > 0 ? { references: draft.references } : {}),
    headers: draft.headers,
    date: draft.date ?? new Date(),
  };
}

export function renderMime(draft: DraftForMime): Promise<Buffer> {
  return new MailComposer(mailOptions(draft)).compile().build();
}
