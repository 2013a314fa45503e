/**
 * Renders a stored draft as an RFC 5322 message with nodemailer's composer, for the IMAP Drafts
 * folder and for the audit copy. Sending uses the same fields through the SMTP transport.
 */
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';

export interface DraftForMime {
  fromAddress: string;
  fromName: string;
  to: string;
  subject: string;
  body: string;
  messageId: string;
  inReplyTo: string | null;
  references: string[];
  headers: Record<string, string>;
  date?: Date;
  /** The mailbox's signature (plain text), put below the body. */
  signature?: string | undefined;
}

/** The body with the mailbox's signature below the standard `-- ` delimiter (RFC 3676 4.3). */
export function withSignature(body: string, signature: string | undefined): string {
  if (!signature) return body;
  return `${body.trimEnd()}\n\n-- \n${signature}`;
}

/** nodemailer message options for a draft: shared by the composer and the SMTP transport. */
export function mailOptions(draft: DraftForMime): Mail.Options {
  return {
    from: { name: draft.fromName, address: draft.fromAddress },
    to: draft.to,
    subject: draft.subject,
    text: withSignature(draft.body, draft.signature),
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
