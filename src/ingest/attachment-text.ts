/**
 * Attachments that count: at ingestion, the text of each attachment a customer sent is read (PDF,
 * plain text, CSV/TSV, HTML, Word, Excel, OpenDocument), up to a cap per file and per message, and
 * stored with the message for the reply prompt; images are named with their size. A file is
 * untrusted input, so each one is read by a warm reader worker (attachment-pool.ts) with a time
 * limit, a V8 heap limit and readers that bound their own buffers. A file too large, encrypted,
 * corrupt, hostile, or that kills its reader, is noted with the reason ("skipped, because …"),
 * never fatal: the mail is ingested either way. Never throws.
 */
import { silentLogger, type Logger } from '../logger.ts';
import { attachmentKind, formatBytes, renderAttachmentText, type ReadAttachment } from '../mail/attachments.ts';
import type { AttachmentExtraction, AttachmentInfo, ParsedEmail } from '../mail/parse-message.ts';
import { sharedReaderPool } from './attachment-pool.ts';
import type { ReaderRequest, ReaderResult } from './attachment-reader.ts';
import type { AttachmentFileLimits } from './read-message.ts';

export interface AttachmentSettings {
  /** At most this many attachments per message are read (ATTACHMENT_MAX_FILES); 0 reads none (images are still named). */
  maxFiles: number;
  /** A larger attachment is not read (ATTACHMENT_MAX_BYTES). */
  maxBytes: number;
  /** Characters of attachment text kept per message, all files together (ATTACHMENT_TEXT_MAX_CHARS). */
  textMaxChars: number;
  /** One file's reading is stopped after this long (ATTACHMENT_TIMEOUT). */
  timeoutMs: number;
  /** Each reader worker's V8 heap limit in MB (ATTACHMENT_WORKER_MEMORY). */
  memoryMb: number;
  /** Reader workers kept warm (ATTACHMENT_WORKERS): files of different messages are read side by side. */
  workers: number;
  /** At most this many pages of a PDF are read. */
  maxPdfPages: number;
}

export const DEFAULT_ATTACHMENT_SETTINGS: AttachmentSettings = {
  maxFiles: 5,
  maxBytes: 10 * 1024 * 1024,
  textMaxChars: 20_000,
  timeoutMs: 15_000,
  memoryMb: 256,
  workers: 2,
  maxPdfPages: 50,
};

/** At most this many attachments are named in the stored text (the rest are counted). */
const MAX_NAMED = 20;

/** What the parser keeps of attachments for these settings (their bytes, for reading). */
export function attachmentFileLimits(settings: AttachmentSettings): AttachmentFileLimits | undefined {
  return settings.maxFiles > 0 ? { maxFiles: settings.maxFiles, maxBytes: settings.maxBytes } : undefined;
}

export interface AttachmentReading {
  /** The message's attachments with what became of each (`extraction`). */
  attachments: AttachmentInfo[];
  /** The block stored with the message (`Message.attachmentText`) and offered to the model; '' when none. */
  text: string;
}

/**
 * Reads the text of a parsed message's attachments, one file after the other (each file's share of
 * the message's text cap depends on the ones before); files of different messages are read side by
 * side by the pool. Never throws.
 */
export async function readAttachments(
  email: ParsedEmail,
  settings: AttachmentSettings,
  logger: Logger = silentLogger,
): Promise<AttachmentReading> {
  const pool = sharedReaderPool(
    { workers: Math.max(1, settings.workers), timeoutMs: settings.timeoutMs, memoryMb: settings.memoryMb },
    logger,
  );
  const files = new Map((email.attachmentFiles ?? []).map((f) => [f.index, f.bytes]));
  const read: ReadAttachment[] = [];
  let left = settings.textMaxChars;
  for (const [index, info] of email.attachments.entries()) {
    const { extraction, text } = await readOne(info, files.get(index) ?? null, settings, left, (request) => pool.run(request));
    left -= text.length;
    read.push({ info: { ...info, extraction }, extraction, text });
  }
  const named = read.slice(0, MAX_NAMED);
  const rest = read.length - named.length;
  const text = renderAttachmentText(named) + (rest > 0 ? `\n\n[${rest} more attachment(s) not listed]` : '');
  return { attachments: read.map((r) => r.info), text };
}

async function readOne(
  info: AttachmentInfo,
  bytes: Uint8Array | null,
  settings: AttachmentSettings,
  left: number,
  read: (request: ReaderRequest) => Promise<ReaderResult>,
): Promise<{ extraction: AttachmentExtraction; text: string }> {
  const kind =
    info.contentType.startsWith('message/') || info.contentType.startsWith('text/rfc822') ? 'unsupported' : attachmentKind(info, bytes);
  const skipped = (reason: string) => ({ extraction: { status: 'skipped' as const, kind, chars: 0, reason }, text: '' });
  if (kind === 'image') return { extraction: { status: 'image', kind: 'image', chars: 0 }, text: '' };
  if (kind === 'unsupported') return skipped(`its type is not read (${info.contentType})`);
  if (kind === 'legacy-office') return skipped('it is an encrypted Office file or an old .doc/.xls file, which is not read');
  if (info.size > settings.maxBytes) return skipped(`it is larger than ATTACHMENT_MAX_BYTES (${formatBytes(settings.maxBytes)})`);
  if (info.size === 0) return skipped('it is empty');
  if (!bytes) return skipped(`more than ATTACHMENT_MAX_FILES (${settings.maxFiles}) attachments are not read`);
  if (left <= 0) return skipped(`the message's attachment text cap (ATTACHMENT_TEXT_MAX_CHARS, ${settings.textMaxChars}) was reached`);

  const result = await read({
    kind,
    bytes,
    ...(info.charset ? { charset: info.charset } : {}),
    maxChars: left,
    maxPdfPages: settings.maxPdfPages,
  });
  if (!result.ok) return skipped(result.reason);
  return extracted(result.format, result.text, left, result.note ? [result.note] : []);
}

function extracted(format: string, raw: string, left: number, notes: string[]): { extraction: AttachmentExtraction; text: string } {
  const text = raw
    .replace(/\u0000/g, '')
    .trim()
    .slice(0, left);
  if (text === '') notes.push('no text in it');
  else if (raw.trim().length >= left) notes.push(`cut at ${left.toLocaleString('en-US')} characters`);
  return {
    extraction: { status: 'extracted', kind: format, chars: text.length, ...(notes.length > 0 ? { reason: notes.join(', ') } : {}) },
    text,
  };
}
