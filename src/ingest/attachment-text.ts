/**
 * Attachments that count: at ingestion, the text of each attachment a customer sent is read (PDF,
 * plain text, CSV/TSV, HTML, Word, Excel, OpenDocument), up to a cap per file and per message, and
 * stored with the message for the reply prompt; images are named with their size. A file is
 * untrusted input, so each one is read in a worker thread of its own (PDFs by PDF.js in the
 * knowledge base's PDF worker, src/knowledge/pdf-text.ts; everything else by
 * attachment-worker-main.ts), with a time limit after which the thread is terminated and a V8 heap
 * limit. A file too large, encrypted, corrupt, hostile or of a type not read is noted with the
 * reason ("skipped, because …"), never fatal: the mail is ingested either way. Never throws.
 */
import { Worker } from 'node:worker_threads';
import { attachmentKind, formatBytes, renderAttachmentText, type ReadAttachment } from '../mail/attachments.ts';
import type { AttachmentExtraction, AttachmentInfo, ParsedEmail } from '../mail/parse-message.ts';
import { pdfText } from '../knowledge/pdf-text.ts';
import type { ReaderKind, ReaderRequest, ReaderResult } from './attachment-reader.ts';
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
  /** The reading worker's V8 heap limit in MB (ATTACHMENT_WORKER_MEMORY). */
  memoryMb: number;
  /** At most this many pages of a PDF are read. */
  maxPdfPages: number;
}

export const DEFAULT_ATTACHMENT_SETTINGS: AttachmentSettings = {
  maxFiles: 5,
  maxBytes: 10 * 1024 * 1024,
  textMaxChars: 20_000,
  timeoutMs: 15_000,
  memoryMb: 256,
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
 * One message's attachments are read at a time in the process (messages of a fetched chunk are
 * prepared side by side): at most one reading worker, and its heap limit, exists at once.
 */
let queue: Promise<unknown> = Promise.resolve();

/** Reads the text of a parsed message's attachments, one file after the other. Never throws. */
export function readAttachments(email: ParsedEmail, settings: AttachmentSettings): Promise<AttachmentReading> {
  const turn = queue.then(() => readAll(email, settings));
  queue = turn.catch(() => undefined);
  return turn;
}

async function readAll(email: ParsedEmail, settings: AttachmentSettings): Promise<AttachmentReading> {
  const files = new Map((email.attachmentFiles ?? []).map((f) => [f.index, f.bytes]));
  const read: ReadAttachment[] = [];
  let left = settings.textMaxChars;
  for (const [index, info] of email.attachments.entries()) {
    const { extraction, text } = await readOne(info, files.get(index) ?? null, settings, left);
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

  if (kind === 'pdf') {
    const pdf = await pdfText(bytes, {
      timeoutMs: settings.timeoutMs,
      maxPages: settings.maxPdfPages,
      maxChars: left,
      memoryMb: settings.memoryMb,
    });
    if (!pdf.ok)
      return skipped(
        /password/i.test(pdf.reason)
          ? 'it is encrypted (password-protected)'
          : pdf.reason.replace(/^not a readable PDF/, 'it is not a readable PDF'),
      );
    const notes = [`${pdf.totalPages} page${pdf.totalPages === 1 ? '' : 's'}`];
    if (pdf.pages < pdf.totalPages) notes.push(`only the first ${pdf.pages} read`);
    return extracted('pdf', pdf.text, left, notes);
  }
  const result = await readInWorker({ kind, bytes, ...(info.charset ? { charset: info.charset } : {}), maxChars: left }, settings);
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

const READER_ENTRY = new URL('./attachment-worker.mjs', import.meta.url);

/** One file in a worker thread of its own, terminated after `timeoutMs`, its heap capped. */
function readInWorker(request: ReaderRequest & { kind: ReaderKind }, settings: AttachmentSettings): Promise<ReaderResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: ReaderResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate().catch(() => undefined);
      resolve(result);
    };
    const copy = Uint8Array.from(request.bytes);
    let worker: Worker;
    try {
      worker = new Worker(READER_ENTRY, {
        workerData: { ...request, bytes: copy },
        transferList: [copy.buffer],
        resourceLimits: { maxOldGenerationSizeMb: settings.memoryMb },
        env: {},
        stdout: true,
        stderr: true,
      });
    } catch (error) {
      resolve({ ok: false, reason: `no reader could start (${String(error).slice(0, 120)})` });
      return;
    }
    const timer = setTimeout(
      () => finish({ ok: false, reason: `reading it took longer than ATTACHMENT_TIMEOUT (${settings.timeoutMs} ms)` }),
      settings.timeoutMs,
    );
    worker.on('message', (message: unknown) => finish(readerReply(message)));
    worker.on('error', (error: Error & { code?: string }) =>
      finish({
        ok: false,
        reason:
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `reading it needed more than ATTACHMENT_WORKER_MEMORY (${settings.memoryMb} MB)`
            : `the reader failed (${error.message.slice(0, 120)})`,
      }),
    );
    worker.on('exit', (code) => finish({ ok: false, reason: `the reader stopped (exit code ${code})` }));
  });
}

function readerReply(message: unknown): ReaderResult {
  const m = message as Partial<{ ok: unknown; text: unknown; format: unknown; note: unknown; reason: unknown }> | null;
  if (m?.ok === true && typeof m.text === 'string' && typeof m.format === 'string')
    return { ok: true, text: m.text, format: m.format, ...(typeof m.note === 'string' ? { note: m.note } : {}) };
  return { ok: false, reason: typeof m?.reason === 'string' ? m.reason : 'the reader gave no answer' };
}
