/**
 * The one place where a customer's words enter the product masked: every text field of a parsed
 * message that is stored, shown or put into a prompt (subject, display name, body, new text,
 * attachment names and attachments' text) has its sensitive values replaced by typed placeholders
 * (src/mail/sensitive-values.ts). The raw message (`MessageRaw.raw`) keeps them: it is the evidence
 * of what arrived, erasable with the customer, and the console masks it when it shows it. The
 * text and HTML parts are neither stored nor prompted (what is, is `bodyText` and the new text):
 * they stay as they are for the classifier and the synthetic Message-ID.
 */
import type { ParsedEmail, ParseOutcome } from '../mail/parse-message.ts';
import { maskText } from '../mail/sensitive-values.ts';
import type { ReadMessage } from './read-message.ts';

/** A read message with its stored and prompted texts masked. */
export function maskReadMessage(read: ReadMessage): ReadMessage {
  return read.parsed.ok ? { parsed: { ok: true, email: maskEmail(read.parsed.email) }, text: maskText(read.text) } : read;
}

/** The headers of a message too large to parse, with its subject and display name masked. */
export function maskHeaders(headers: ParseOutcome): ParseOutcome {
  return headers.ok ? { ok: true, email: maskEmail(headers.email) } : headers;
}

function maskEmail(email: ParsedEmail): ParsedEmail {
  return {
    ...email,
    subject: maskText(email.subject),
    from: email.from?.name ? { ...email.from, name: maskText(email.from.name) } : email.from,
    bodyText: maskText(email.bodyText),
    attachments: email.attachments.map((a) => (a.filename ? { ...a, filename: maskText(a.filename) } : a)),
    ...(email.attachmentText === undefined ? {} : { attachmentText: maskText(email.attachmentText) }),
  };
}
