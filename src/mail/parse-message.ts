/**
 * Turns raw RFC 5322 bytes into the typed `ParsedEmail` the rest of the product works with.
 * mailparser does the MIME and charset work; attachments are streamed through a hash and dropped,
 * so a 25 MB attachment is never held as one more buffer, except the files whose text may be read
 * (`ParseLimits.attachmentFiles`): those are kept, each up to its byte cap, for the attachment
 * reader (src/ingest/attachment-text.ts). No I/O beyond the given bytes.
 */
import { createHash } from 'node:crypto';
import { MailParser, type AddressObject, type AttachmentStream, type HeaderLines, type Headers, type MessageText } from 'mailparser';
import { cleanDisplayName, normaliseAddress } from './addresses.ts';
import { repairHeaderSection, startsWithHeaderField } from './header-repair.ts';
import { htmlToVisibleText } from './html-text.ts';

export interface MailAddress {
  /** Normalised address, or null when the header held nothing usable. */
  address: string | null;
  name: string | null;
}

export interface AttachmentInfo {
  filename: string | null;
  contentType: string;
  size: number;
  sha256: string;
  inline: boolean;
  /** The `charset` parameter of the part's Content-Type, lower-cased, when it named one. */
  charset?: string;
  /** What became of the file's text (set at ingestion, see src/ingest/attachment-text.ts). */
  extraction?: AttachmentExtraction;
}

/** What reading an attachment's text gave: its text, an image (named, not read), or why it was skipped. */
export interface AttachmentExtraction {
  status: 'extracted' | 'image' | 'skipped';
  /** The format read (`pdf`, `docx`, `csv`, …) or guessed. */
  kind: string;
  /** Characters of text kept (0 unless extracted). */
  chars: number;
  /** Why the text was not read or was cut ("larger than …", "encrypted", "not a readable PDF: …"). */
  reason?: string;
}

/** The bytes of an attachment whose text may be read, by its index in `ParsedEmail.attachments`. */
export interface AttachmentFile {
  index: number;
  bytes: Uint8Array;
}

/**
 * A machine-readable part of a report, kept (bounded) for the classifier: the delivery status of a
 * DSN, an ARF feedback report, the returned message or its headers. mailparser hands these over as
 * attachments; everything else is hashed and dropped.
 */
export interface ReportPart {
  /** Lower-cased MIME type, e.g. `message/delivery-status`, `text/rfc822-headers`, `message/rfc822`. */
  contentType: string;
  /** The part's first `maxReportPartBytes` bytes as text. */
  text: string;
  truncated: boolean;
}

export interface ParsedEmail {
  /** The Message-ID as written (with angle brackets), or null when missing or unusable. */
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  from: MailAddress | null;
  replyTo: MailAddress[];
  to: MailAddress[];
  cc: MailAddress[];
  subject: string;
  date: Date | null;
  /** Lower-cased header name to its raw, unfolded values, in order of appearance. */
  rawHeaders: ReadonlyMap<string, readonly string[]>;
  contentType: string;
  /** The text/plain content when the mail has one, else null. */
  textPart: string | null;
  html: string | null;
  /** What a person reads: the text part, or the visible text of the HTML. */
  bodyText: string;
  attachments: AttachmentInfo[];
  headerCount: number;
  /** `report-type` of a top-level multipart/report (lower-cased; '' when the parameter is missing), else null. */
  reportType: string | null;
  /** Report parts found anywhere outside an attached message (see `ReportPart`). */
  reportParts: ReportPart[];
  /** What lenient header parsing repaired before mailparser saw the bytes (see header-repair.ts). */
  repairs: string[];
  /** The kept bytes of attachments whose text may be read (see `ParseLimits.attachmentFiles`). */
  attachmentFiles?: AttachmentFile[];
  /** The attachments' text block once read at ingestion (src/ingest/attachment-text.ts); absent before. */
  attachmentText?: string;
}

export type ParseOutcome = { ok: true; email: ParsedEmail } | { ok: false; reason: string };

export interface ParseLimits {
  timeoutMs: number;
  maxHtmlChars: number;
  maxTextChars: number;
  maxReferences: number;
  maxRecipients: number;
  maxAttachmentsListed: number;
  /** How much of each report part is kept for the classifier, and how many parts. */
  maxReportPartBytes: number;
  maxReportParts: number;
  /**
   * Attachments (not images, audio, video or report parts) whose bytes are kept for reading their
   * text: at most `maxFiles` of them, each only when it is at most `maxBytes`. Absent: none kept.
   * With `images`, image parts are kept too (for a vision-capable model, src/ingest/turn-images.ts).
   */
  attachmentFiles?: { maxFiles: number; maxBytes: number; images?: boolean };
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  timeoutMs: 30_000,
  maxHtmlChars: 2_000_000,
  maxTextChars: 1_000_000,
  maxReferences: 100,
  maxRecipients: 200,
  maxAttachmentsListed: 100,
  maxReportPartBytes: 64 * 1024,
  maxReportParts: 8,
};

const MESSAGE_ID = /<([^<>\s]{1,250})>/g;
const RAW_HEADERS_KEPT = new Set([
  'auto-submitted',
  'x-autoreply',
  'x-autorespond',
  'x-auto-response-suppress',
  'precedence',
  'x-precedence',
  'list-id',
  'list-unsubscribe',
  'list-post',
  'return-path',
  'authentication-results',
  'x-autogenerated',
  'x-support-agent',
  'in-reply-to',
  'references',
  'message-id',
  'feedback-type',
  'x-failed-recipients',
  'x-hmxmroriginalrecipient',
  'x-list-administrivia',
  'x-mailman-version',
  'x-ml-name',
  'x-mlserver',
  'x-ml-server',
  'x-loop',
  'content-language',
  'x-ms-exchange-message-is-ndr',
  'x-mddsn-message',
]);

/**
 * Parts mailparser emits as attachments that the classifier reads: RFC 3464/6533 delivery status,
 * RFC 5965 feedback reports, RFC 8098 disposition notifications, the returned message or its headers,
 * and JSON (a provider's notification relayed as mail).
 */
const REPORT_PART_TYPES = new Set([
  'message/delivery-status',
  'message/global-delivery-status',
  'message/feedback-report',
  'message/disposition-notification',
  'message/global-disposition-notification',
  'text/rfc822-headers',
  'message/rfc822-headers',
  'message/global-headers',
  'message/rfc822',
  'message/global',
  'text/rfc822',
  // Sending providers' notifications forwarded as mail with a JSON body (see provider-notification.ts).
  'application/json',
]);

/**
 * Parses raw mail. Never throws: unparseable input, and any exception inside a parser callback,
 * comes back as `{ ok: false, reason }` (ingestion keeps such mail raw as `malformed`).
 */
export async function parseRawEmail(raw: Buffer, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Promise<ParseOutcome> {
  if (raw.length === 0) return { ok: false, reason: 'empty message' };
  try {
    const repaired = repairHeaderSection(raw);
    if (!startsWithHeaderField(repaired.raw)) return { ok: false, reason: 'no RFC 5322 header section' };
    const result = await runParser(repaired.raw, limits);
    return { ok: true, email: buildEmail(result, limits, repaired.repairs) };
  } catch (error) {
    return { ok: false, reason: `unparseable: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300) };
  }
}

interface ParserResult {
  headers: Headers;
  headerLines: HeaderLines;
  text: MessageText | null;
  attachments: AttachmentInfo[];
  reportParts: ReportPart[];
  files: AttachmentFile[];
}

/** An exception thrown inside a callback of the parser or of a stream it hands out. */
type Guard = <A extends unknown[]>(handler: (...args: A) => void) => (...args: A) => void;

function runParser(raw: Buffer, limits: ParseLimits): Promise<ParserResult> {
  return new Promise((resolve, reject) => {
    const parser = new MailParser({
      skipHtmlToText: true,
      skipTextToHtml: true,
      skipTextLinks: true,
      skipImageLinks: true,
      checksumAlgo: false,
      // A DSN's machine-readable part comes as an attachment (for the classifier) instead of being
      // appended to the text a person reads.
      keepDeliveryStatus: true,
      // An embedded message (a report's returned mail, a forward) stays one attachment even when its
      // disposition is inline: the classifier reads its headers, and its text is not what the sender wrote.
      ignoreEmbedded: true,
      maxHtmlLengthToParse: limits.maxHtmlChars,
    });
    const result: ParserResult = { headers: new Map(), headerLines: [], text: null, attachments: [], reportParts: [], files: [] };
    let settled = false;
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        parser.destroy();
        reject(error);
      } else resolve(result);
    };
    // Every callback runs inside the parser's or a stream's event emission: an exception escaping
    // one would reach the process (an uncaught exception), not this promise.
    const guard: Guard =
      (handler) =>
      (...args) => {
        try {
          handler(...args);
        } catch (error) {
          finish(error instanceof Error ? error : new Error(String(error)));
        }
      };
    const timer = setTimeout(() => finish(new Error(`parsing took longer than ${limits.timeoutMs} ms`)), limits.timeoutMs);
    parser.on(
      'headers',
      guard((headers: Headers) => {
        result.headers = headers;
      }),
    );
    parser.on(
      'headerLines',
      guard((lines: HeaderLines) => {
        result.headerLines = Array.isArray(lines) ? lines : [];
      }),
    );
    parser.on(
      'data',
      guard((data: AttachmentStream | MessageText) => {
        if (data.type === 'text') {
          result.text = data;
          return;
        }
        consumeAttachment(data, result, limits, guard);
      }),
    );
    parser.on(
      'error',
      guard((error: unknown) => finish(error instanceof Error ? error : new Error(String(error)))),
    );
    parser.on(
      'end',
      guard(() => finish(null)),
    );
    try {
      parser.end(raw);
    } catch (error) {
      finish(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

function consumeAttachment(attachment: AttachmentStream, into: ParserResult, limits: ParseLimits, guard: Guard): void {
  const hash = createHash('sha256');
  let size = 0;
  // mailparser gives `false` or nothing for an empty or unparseable Content-Type (`Content-Type: ; name=x`).
  const contentType = withoutNul(textOf(attachment.contentType) ?? 'application/octet-stream')
    .toLowerCase()
    .slice(0, 200);
  const capture =
    REPORT_PART_TYPES.has(contentType) && into.reportParts.length < limits.maxReportParts
      ? { chunks: [] as Buffer[], bytes: 0, total: 0 }
      : null;
  const fileLimits = limits.attachmentFiles;
  const keep =
    fileLimits &&
    !capture &&
    !REPORT_PART_TYPES.has(contentType) &&
    !(fileLimits.images ? /^(audio|video)\// : /^(image|audio|video)\//).test(contentType)
      ? { chunks: [] as Buffer[], bytes: 0, over: false, maxBytes: fileLimits.maxBytes, maxFiles: fileLimits.maxFiles }
      : null;
  attachment.content.on(
    'data',
    guard((chunk: Buffer) => {
      size += chunk.length;
      hash.update(chunk);
      if (keep && !keep.over) {
        keep.bytes += chunk.length;
        if (keep.bytes > keep.maxBytes) {
          keep.over = true;
          keep.chunks = [];
        } else keep.chunks.push(chunk);
      }
      if (capture) {
        capture.total += chunk.length;
        if (capture.bytes < limits.maxReportPartBytes) {
          const kept = chunk.subarray(0, limits.maxReportPartBytes - capture.bytes);
          capture.chunks.push(kept);
          capture.bytes += kept.length;
        }
      }
    }),
  );
  attachment.content.on(
    'end',
    guard(() => {
      if (into.attachments.length < limits.maxAttachmentsListed) {
        const filename = textOf(attachment.filename);
        const charset = charsetOf(attachment.headers);
        into.attachments.push({
          filename: filename ? cleanDisplayName(withoutNul(filename)) : null,
          contentType,
          size,
          sha256: hash.digest('hex'),
          inline: attachment.related === true || textOf(attachment.contentDisposition)?.toLowerCase() === 'inline',
          ...(charset ? { charset } : {}),
        });
        if (keep && !keep.over && size > 0 && into.files.length < keep.maxFiles) {
          into.files.push({ index: into.attachments.length - 1, bytes: Buffer.concat(keep.chunks) });
        }
      }
      if (capture && into.reportParts.length < limits.maxReportParts) {
        const text = withoutNul(Buffer.concat(capture.chunks).toString('utf8'));
        into.reportParts.push({ contentType, text, truncated: capture.total > capture.bytes });
      }
      if (typeof attachment.release === 'function') attachment.release();
    }),
  );
  attachment.content.on(
    'error',
    guard((error: unknown) => {
      throw error instanceof Error ? error : new Error(String(error));
    }),
  );
}

/** The `charset` parameter of a part's Content-Type (a token, lower-cased), when there is one. */
function charsetOf(headers: Headers | undefined): string | null {
  const header = headers instanceof Map ? headers.get('content-type') : undefined;
  const params = header && typeof header === 'object' && 'params' in header ? (header as { params?: unknown }).params : undefined;
  const value = params && typeof params === 'object' ? (params as Record<string, unknown>).charset : undefined;
  return typeof value === 'string' && /^[A-Za-z0-9._:+-]{1,40}$/.test(value.trim()) ? value.trim().toLowerCase() : null;
}

/** Attachment metadata from mailparser may be a string, `false`, undefined or (for odd headers) an array. */
function textOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.find((v): v is string => typeof v === 'string') ?? null;
  return null;
}

function buildEmail(parsed: ParserResult, limits: ParseLimits, repairs: string[]): ParsedEmail {
  const rawHeaders = collectRawHeaders(parsed.headerLines);
  const first = (name: string): string | undefined => rawHeaders.get(name)?.[0];
  const contentTypeHeader = parsed.headers.get('content-type');
  const contentType =
    contentTypeHeader &&
    typeof contentTypeHeader === 'object' &&
    'value' in contentTypeHeader &&
    typeof contentTypeHeader.value === 'string'
      ? withoutNul(contentTypeHeader.value.toLowerCase()).slice(0, 200)
      : 'text/plain';

  const textPart = nonEmpty(withoutNul(parsed.text?.text))?.slice(0, limits.maxTextChars) ?? null;
  const html = nonEmpty(withoutNul(parsed.text?.html))?.slice(0, limits.maxHtmlChars) ?? null;
  const bodyText = textPart ?? (html ? htmlToVisibleText(html) : '');
  const date = parsed.headers.get('date');
  const subject = parsed.headers.get('subject');

  return {
    messageId: firstMessageId(first('message-id')),
    inReplyTo: messageIds(rawHeaders.get('in-reply-to')?.join(' ') ?? '', limits.maxReferences),
    references: messageIds(rawHeaders.get('references')?.join(' ') ?? '', limits.maxReferences),
    from: addressList(parsed.headers.get('from'), 1)[0] ?? null,
    replyTo: addressList(parsed.headers.get('reply-to'), limits.maxRecipients),
    to: addressList(parsed.headers.get('to'), limits.maxRecipients),
    cc: addressList(parsed.headers.get('cc'), limits.maxRecipients),
    subject: typeof subject === 'string' ? withoutNul(subject).slice(0, 1000) : '',
    date: date instanceof Date && Number.isFinite(date.getTime()) ? date : null,
    rawHeaders,
    contentType,
    textPart,
    html,
    bodyText,
    attachments: parsed.attachments,
    headerCount: parsed.headerLines.length,
    reportType: reportTypeOf(contentType, contentTypeHeader),
    reportParts: parsed.reportParts,
    repairs,
    attachmentFiles: parsed.files,
  };
}

function reportTypeOf(contentType: string, header: unknown): string | null {
  if (contentType !== 'multipart/report') return null;
  const params = header && typeof header === 'object' && 'params' in header ? (header as { params?: unknown }).params : undefined;
  const value = params && typeof params === 'object' ? (params as Record<string, unknown>)['report-type'] : undefined;
  return typeof value === 'string' ? withoutNul(value).trim().toLowerCase().slice(0, 100) : '';
}

function collectRawHeaders(lines: HeaderLines): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const { key, line } of lines) {
    const name = key.toLowerCase();
    if (!RAW_HEADERS_KEPT.has(name)) continue;
    const colon = line.indexOf(':');
    const value = withoutNul(line.slice(colon + 1))
      .replace(/\r?\n[ \t]+/g, ' ')
      .trim();
    const values = map.get(name) ?? [];
    if (values.length < 50) values.push(value.slice(0, 20_000));
    map.set(name, values);
  }
  return map;
}

/** PostgreSQL text cannot hold NUL, and no reader needs one. */
function withoutNul<T extends string | undefined>(value: T): T {
  return (value === undefined ? value : value.replace(/\u0000/g, '')) as T;
}

function nonEmpty(value: string | undefined): string | null {
  return value && value.trim().length > 0 ? value : null;
}

function firstMessageId(value: string | undefined): string | null {
  return value ? (messageIds(value, 1)[0] ?? null) : null;
}

/** Message-IDs in a header; when there are very many, keep the first (the thread root) and the newest. */
function messageIds(value: string, max: number): string[] {
  const ids = [...value.matchAll(MESSAGE_ID)].map((m) => `<${m[1]}>`);
  const unique = [...new Set(ids)];
  if (unique.length <= max) return unique;
  return [unique[0] as string, ...unique.slice(unique.length - (max - 1))];
}

function addressList(value: Headers extends Map<string, infer V> ? V | undefined : never, max: number): MailAddress[] {
  if (!value || typeof value !== 'object' || value instanceof Date) return [];
  const objects = (Array.isArray(value) ? value : [value]) as unknown[];
  const out: MailAddress[] = [];
  const visit = (entry: { name?: string; address?: string; group?: unknown[] }) => {
    if (out.length >= max) return;
    if (Array.isArray(entry.group)) {
      for (const member of entry.group) visit(member as typeof entry);
      return;
    }
    out.push({ address: normaliseAddress(entry.address), name: cleanDisplayName(entry.name) });
  };
  for (const object of objects) {
    const addresses = (object as AddressObject).value;
    if (Array.isArray(addresses)) for (const entry of addresses) visit(entry);
  }
  return out;
}
