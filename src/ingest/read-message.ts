/**
 * Reading one raw message for ingestion: parse it (mailparser), extract its new text, and cap both
 * texts so that every later step (classification, storage, context, token counting, the model,
 * promotion) works on input of bounded size. Pure CPU work on the given bytes, no I/O: it runs in a
 * parse worker (parse-pool.ts) so a hostile message cannot block the main thread.
 */
import { cutMark, sliceWhole } from '../mail/html-text.ts';
import { DEFAULT_PARSE_LIMITS, parseRawEmail, type ParseLimits, type ParseOutcome } from '../mail/parse-message.ts';
import { extractReplyText } from '../mail/reply-text.ts';

/**
 * The stored full text of a message (`bodyText`). The console shows it; no prompt takes it whole.
 * About 25,000 tokens: far more than a person writes, far less than a log dump pasted into a mail.
 */
export const MAX_BODY_TEXT_CHARS = 100_000;

/**
 * The new text of a message (`extractedText`): what the context, the model and promotion read. The
 * prompt takes `MESSAGE_TOKEN_CAP` (1,200) tokens of it anyway; 20,000 characters (about 5,000
 * tokens) keeps every step after parsing small while leaving room for a long, real email.
 */
export const MAX_NEW_TEXT_CHARS = 20_000;

/** Bytes of a message's header section read when the message itself is too large to parse. */
const MAX_HEADER_BYTES = 256 * 1024;

/** A parsed message and its new text, both capped. */
export interface ReadMessage {
  parsed: ParseOutcome;
  /** The new text only (quoted history and signature removed), cut at `MAX_NEW_TEXT_CHARS`. */
  text: string;
}

/** Which attachments' bytes are kept for reading their text (see `ParseLimits.attachmentFiles`). */
export type AttachmentFileLimits = NonNullable<ParseLimits['attachmentFiles']>;

/** Parses raw mail and extracts its new text. Never throws. */
export async function readMessage(raw: Buffer, files?: AttachmentFileLimits): Promise<ReadMessage> {
  const parsed = await parseRawEmail(raw, files ? { ...DEFAULT_PARSE_LIMITS, attachmentFiles: files } : DEFAULT_PARSE_LIMITS);
  if (!parsed.ok) return { parsed, text: '' };
  const email = parsed.email;
  const text = capText(extractReplyText({ text: email.textPart, html: email.html }), MAX_NEW_TEXT_CHARS);
  return { parsed: { ok: true, email: { ...email, bodyText: capText(email.bodyText, MAX_BODY_TEXT_CHARS) } }, text };
}

/**
 * Parses only the header section at the start of `head` (the first bytes of a message too large to
 * parse whole), for the sender, subject, date and Message-ID. Never throws.
 */
export async function readHeaders(head: Buffer): Promise<ParseOutcome> {
  const window = head.subarray(0, MAX_HEADER_BYTES);
  const end = headerEnd(window);
  const headers = end >= 0 ? window.subarray(0, end) : window;
  return parseRawEmail(Buffer.concat([headers, Buffer.from('\r\n\r\n', 'latin1')]));
}

/** Index of the blank line ending the header section, or -1 when `bytes` holds none. */
function headerEnd(bytes: Buffer): number {
  const crlf = bytes.indexOf('\r\n\r\n', 0, 'latin1');
  const lf = bytes.indexOf('\n\n', 0, 'latin1');
  if (crlf < 0) return lf;
  if (lf < 0) return crlf;
  return Math.min(crlf, lf);
}

/** `text` cut at `max` characters, with a cut mark as its last line when it was longer. */
function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${sliceWhole(text, max).trimEnd()}\n\n${cutMark(`longer than ${max.toLocaleString('en-US')} characters`)}`;
}
