/**
 * Reading the text of one attachment, inside a reader worker (attachment-pool.ts), which caps its
 * time and heap: plain text and HTML in their charset, CSV and TSV as rows, Office documents
 * (attachment-office.ts, from the one bounded ZIP reader attachment-zip.ts) and PDFs (PDF.js within
 * a budget of decoded bytes, src/knowledge/pdf-extract.ts). Each step is bounded on its own as well:
 * only the first bytes a text can need are decoded. Never throws.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { extractPdfText } from '../knowledge/pdf-extract.ts';
import { htmlToVisibleText } from '../mail/html-text.ts';
import { officeText } from './attachment-office.ts';

export type ReaderKind = 'pdf' | 'office' | 'csv' | 'tsv' | 'text' | 'html';

export interface ReaderRequest {
  kind: ReaderKind;
  bytes: Uint8Array;
  /** The part's declared charset, when it named one (text, CSV, TSV, HTML). */
  charset?: string;
  /** At most this many characters of text come back. */
  maxChars: number;
  /** At most this many pages of a PDF are read (default 50). */
  maxPdfPages?: number;
}

export type ReaderResult = { ok: true; text: string; format: string; note?: string } | { ok: false; reason: string };

export async function readAttachmentText(request: ReaderRequest): Promise<ReaderResult> {
  try {
    switch (request.kind) {
      case 'text':
        return { ok: true, format: 'text', text: decodeText(request.bytes, request.charset, request.maxChars).slice(0, request.maxChars) };
      case 'html':
        return {
          ok: true,
          format: 'html',
          text: htmlToVisibleText(decodeText(request.bytes, request.charset, request.maxChars * 4)).slice(0, request.maxChars),
        };
      case 'csv':
      case 'tsv':
        return { ok: true, format: request.kind, text: csvRows(request.bytes, request.kind, request.charset, request.maxChars) };
      case 'office':
        return officeText(request.bytes, request.maxChars);
      case 'pdf':
        return await pdfResult(request);
    }
  } catch (error) {
    return { ok: false, reason: describe(error) };
  }
}

/** A PDF's text with its page count as the note ("3 pages, only the first 50 read"). */
async function pdfResult(request: ReaderRequest): Promise<ReaderResult> {
  const pdf = await extractPdfText(request.bytes, { maxPages: request.maxPdfPages ?? 50, maxChars: request.maxChars });
  if (!pdf.ok) {
    if (pdf.bomb) return { ok: false, reason: pdf.reason };
    return {
      ok: false,
      reason: /password/i.test(pdf.reason) ? 'it is encrypted (password-protected)' : `it is not a readable PDF: ${pdf.reason}`,
    };
  }
  const notes = [`${pdf.totalPages} page${pdf.totalPages === 1 ? '' : 's'}`];
  if (pdf.pages < pdf.totalPages) notes.push(`only the first ${pdf.pages} read`);
  return { ok: true, format: 'pdf', text: pdf.text, note: notes.join(', ') };
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RangeError && /call stack/i.test(message)) return 'its structure is nested too deeply to read';
  return `it could not be read (${message.replace(/\s+/g, ' ').slice(0, 160)})`;
}

/**
 * Text from bytes: a byte-order mark decides, else the declared charset when the runtime knows it,
 * else UTF-8 when the bytes are valid UTF-8, else Windows-1252 (what unlabelled Western text
 * usually is). Only the first `maxChars * 4` bytes are decoded (a character takes at most four).
 */
export function decodeText(bytes: Uint8Array, charset: string | undefined, maxChars: number): string {
  let view = bytes.subarray(0, Math.max(0, maxChars) * 4);
  let label: string | undefined;
  if (startsWith(view, [0xef, 0xbb, 0xbf])) {
    view = view.subarray(3);
    label = 'utf-8';
  } else if (startsWith(view, [0xff, 0xfe])) label = 'utf-16le';
  else if (startsWith(view, [0xfe, 0xff])) label = 'utf-16be';
  else if (charset && !/^(us-)?ascii$/.test(charset)) label = charset;
  let text: string | null = null;
  if (label) {
    try {
      text = new TextDecoder(label).decode(view);
    } catch {
      text = null; // a label the runtime does not know: guess below
    }
  }
  if (text === null) {
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(view);
    } catch {
      // Cut inside a multi-byte character, or not UTF-8 at all.
      const valid = utf8UpToCut(view);
      text = valid ?? new TextDecoder('windows-1252').decode(view);
    }
  }
  return text.replace(/\u0000/g, '').replace(/\r\n?/g, '\n');
}

/** UTF-8 text when only the last (cut) character is incomplete, else null. */
function utf8UpToCut(view: Uint8Array): string | null {
  for (let drop = 1; drop <= 3 && drop < view.length; drop++) {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(view.subarray(0, view.length - drop));
    } catch {
      // try one byte shorter
    }
  }
  return null;
}

function startsWith(bytes: Uint8Array, signature: readonly number[]): boolean {
  return bytes.length >= signature.length && signature.every((b, i) => bytes[i] === b);
}

/**
 * CSV or TSV as one line per row, cells joined by " | ". A file that does not parse as CSV (a
 * quote never closed, a record longer than the text cap) comes back as its text.
 */
function csvRows(bytes: Uint8Array, kind: 'csv' | 'tsv', charset: string | undefined, maxChars: number): string {
  const text = decodeText(bytes, charset, maxChars * 2);
  let records: string[][];
  try {
    records = parseCsv(text, {
      delimiter: kind === 'tsv' ? '\t' : delimiterOf(text),
      relax_quotes: true,
      relax_column_count: true,
      skip_empty_lines: true,
      max_record_size: maxChars,
      bom: true,
    }) as string[][];
  } catch {
    return text.slice(0, maxChars);
  }
  const lines: string[] = [];
  let used = 0;
  for (const record of records) {
    const line = record
      .map((cell) => cell.replace(/\s+/g, ' ').trim())
      .join(' | ')
      .replace(/( \| )+$/, '');
    if (used + line.length + 1 > maxChars) {
      if (lines.length === 0) lines.push(line.slice(0, maxChars));
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.join('\n');
}

/** `;` when the first line has more semicolons than commas (European spreadsheets), else `,`. */
function delimiterOf(text: string): string {
  const first = text.slice(0, Math.min(text.length, 4096)).split('\n', 1)[0] ?? '';
  const count = (c: string) => first.split(c).length - 1;
  return count(';') > count(',') ? ';' : ',';
}
