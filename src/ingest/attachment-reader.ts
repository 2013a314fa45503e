/**
 * Reading the text of one attachment that is not a PDF (PDFs go to PDF.js, src/knowledge/pdf-text.ts):
 * plain text and HTML in their charset, CSV and TSV as rows, and Office documents (Word .docx
 * through mammoth; Excel .xlsx and OpenDocument .odt/.ods from their XML). Runs in a worker thread
 * of its own with a time and heap limit (attachment-text.ts); each step here is bounded as well:
 * only the first bytes a text can need are decoded, a ZIP is inflated in small steps under a cap
 * on its entries and their inflated size (a zip bomb stops at the cap), and XML is read by a
 * streaming tokenizer (no recursion, so deep nesting costs nothing). Never throws.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { Unzip, UnzipInflate } from 'fflate';
import { Parser } from 'htmlparser2';
import mammoth from 'mammoth';
import { htmlToVisibleText } from '../mail/html-text.ts';

export type ReaderKind = 'office' | 'csv' | 'tsv' | 'text' | 'html';

export interface ReaderRequest {
  kind: ReaderKind;
  bytes: Uint8Array;
  /** The part's declared charset, when it named one (text, CSV, TSV, HTML). */
  charset?: string;
  /** At most this many characters of text come back. */
  maxChars: number;
}

export type ReaderResult = { ok: true; text: string; format: string; note?: string } | { ok: false; reason: string };

/** A ZIP whose entries inflate to more than this (or hold more entries than `MAX_ZIP_ENTRIES`) is not read. */
export const MAX_INFLATED_BYTES = 64 * 1024 * 1024;
const MAX_ZIP_ENTRIES = 5_000;
/** Compressed bytes handed to the inflater at a time: one step inflates to at most about 1,000 times this. */
const ZIP_STEP_BYTES = 4 * 1024;
/** At most this many spreadsheet shared strings are kept. */
const MAX_SHARED_STRINGS = 200_000;

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
        return await officeText(request.bytes, request.maxChars);
    }
  } catch (error) {
    return { ok: false, reason: describe(error) };
  }
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

// --- Office documents ---

/** The entries of a ZIP, inflated in small steps under the entry and size caps. */
function unzipBounded(bytes: Uint8Array, wanted: (name: string) => boolean): Map<string, Uint8Array> {
  const kept = new Map<string, Uint8Array[]>();
  let entries = 0;
  let inflated = 0;
  let failure = null as Error | null;
  const unzip = new Unzip((file) => {
    entries++;
    if (entries > MAX_ZIP_ENTRIES) throw new Error(`more than ${MAX_ZIP_ENTRIES.toLocaleString('en-US')} entries in the archive`);
    const chunks: Uint8Array[] | null = wanted(file.name) ? [] : null;
    if (chunks) kept.set(file.name, chunks);
    file.ondata = (error, data) => {
      if (error) {
        failure = error instanceof Error ? error : new Error(String(error));
        return;
      }
      inflated += data.length;
      if (inflated > MAX_INFLATED_BYTES) throw new ZipBombError();
      chunks?.push(data);
    };
    file.start();
  });
  unzip.register(UnzipInflate);
  for (let at = 0; at < bytes.length; at += ZIP_STEP_BYTES) {
    unzip.push(bytes.subarray(at, at + ZIP_STEP_BYTES), at + ZIP_STEP_BYTES >= bytes.length);
    if (failure) throw failure;
  }
  const out = new Map<string, Uint8Array>();
  for (const [name, chunks] of kept) out.set(name, Buffer.concat(chunks));
  return out;
}

class ZipBombError extends Error {
  constructor() {
    super(`it inflates to more than ${MAX_INFLATED_BYTES / (1024 * 1024)} MB (a zip bomb?)`);
  }
}

async function officeText(bytes: Uint8Array, maxChars: number): Promise<ReaderResult> {
  let entries: Map<string, Uint8Array>;
  try {
    entries = unzipBounded(
      bytes,
      (name) =>
        name === '[Content_Types].xml' ||
        name === 'mimetype' ||
        name === 'content.xml' ||
        name === 'word/document.xml' ||
        name === 'xl/workbook.xml' ||
        name === 'xl/sharedStrings.xml' ||
        /^xl\/worksheets\/sheet\d{1,4}\.xml$/.test(name),
    );
  } catch (error) {
    if (error instanceof ZipBombError) return { ok: false, reason: error.message };
    return { ok: false, reason: `it is not a readable Office document (${describeZipError(error)})` };
  }
  if (entries.has('word/document.xml')) {
    // Every entry inflated within the caps above, so mammoth's own unzip is bounded too.
    const result = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
    return { ok: true, format: 'docx', text: tidy(result.value).slice(0, maxChars) };
  }
  if (entries.has('xl/workbook.xml')) return { ok: true, format: 'xlsx', text: xlsxText(entries, maxChars) };
  const mimetype = entries.get('mimetype');
  const content = entries.get('content.xml');
  if (mimetype && content) {
    const type = Buffer.from(mimetype).toString('latin1').trim();
    if (type === 'application/vnd.oasis.opendocument.text' || type === 'application/vnd.oasis.opendocument.spreadsheet')
      return { ok: true, format: type.endsWith('text') ? 'odt' : 'ods', text: odfText(content, maxChars) };
  }
  return { ok: false, reason: 'it is a ZIP archive, not a Word, Excel or OpenDocument file' };
}

function describeZipError(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ').slice(0, 120);
}

/** Lines trimmed, runs of blank lines folded to one. */
function tidy(text: string): string {
  return text
    .replace(/\u0000/g, '')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Streams XML through htmlparser2's tokenizer (no tree, no recursion). */
function scanXml(
  xml: Uint8Array,
  handlers: {
    open?: (name: string, attributes: Record<string, string>) => void;
    close?: (name: string) => void;
    text?: (text: string) => void;
  },
): void {
  const parser = new Parser(
    {
      onopentag: (name, attributes) => handlers.open?.(name, attributes),
      onclosetag: (name) => handlers.close?.(name),
      ontext: (text) => handlers.text?.(text),
    },
    { xmlMode: true, decodeEntities: true },
  );
  // Decoded in slices, so no single string is as large as the inflated entry.
  const decoder = new TextDecoder('utf-8');
  const step = 1024 * 1024;
  for (let at = 0; at < xml.length; at += step) parser.write(decoder.decode(xml.subarray(at, at + step), { stream: true }));
  parser.end(decoder.decode());
}

/** A text buffer that stops growing at its cap. */
class CappedText {
  private parts: string[] = [];
  private length = 0;
  constructor(private readonly max: number) {}
  get full(): boolean {
    return this.length >= this.max;
  }
  add(text: string): void {
    if (this.full || text === '') return;
    const kept = text.slice(0, this.max - this.length);
    this.parts.push(kept);
    this.length += kept.length;
  }
  toString(): string {
    return this.parts.join('');
  }
}

function xlsxText(entries: Map<string, Uint8Array>, maxChars: number): string {
  const shared: string[] = [];
  const strings = entries.get('xl/sharedStrings.xml');
  if (strings) {
    let current: string[] | null = null;
    let inText = false;
    scanXml(strings, {
      open: (name) => {
        if (name === 'si') current = [];
        else if (name === 't') inText = true;
      },
      close: (name) => {
        if (name === 't') inText = false;
        else if (name === 'si' && current) {
          if (shared.length < MAX_SHARED_STRINGS) shared.push(current.join('').slice(0, 2_000));
          current = null;
        }
      },
      text: (text) => {
        if (inText && current && current.length < 1_000) current.push(text);
      },
    });
  }
  const names: string[] = [];
  const workbook = entries.get('xl/workbook.xml');
  if (workbook) scanXml(workbook, { open: (name, attributes) => void (name === 'sheet' && names.push(attributes.name ?? '')) });
  const sheets = [...entries.keys()]
    .map((name) => ({ name, n: Number(/sheet(\d+)\.xml$/.exec(name)?.[1]) }))
    .filter((s) => Number.isFinite(s.n))
    .sort((a, b) => a.n - b.n);
  const out = new CappedText(maxChars);
  for (const sheet of sheets) {
    if (out.full) break;
    const title = names[sheet.n - 1] || `Sheet ${sheet.n}`;
    out.add(`${out.toString() === '' ? '' : '\n\n'}Sheet: ${title.replace(/\s+/g, ' ').slice(0, 100)}\n`);
    let row: string[] = [];
    let cellType = '';
    let value: string[] = [];
    let inValue = false;
    scanXml(entries.get(sheet.name)!, {
      open: (name, attributes) => {
        if (name === 'row') row = [];
        else if (name === 'c') {
          cellType = attributes.t ?? '';
          value = [];
        } else if (name === 'v' || name === 't') inValue = true;
      },
      close: (name) => {
        if (name === 'v' || name === 't') inValue = false;
        else if (name === 'c') {
          const raw = value.join('');
          const cell = cellType === 's' ? (shared[Number(raw)] ?? '') : cellType === 'b' ? (raw === '1' ? 'TRUE' : 'FALSE') : raw;
          if (row.length < 1_000) row.push(cell.replace(/\s+/g, ' ').trim());
        } else if (name === 'row') {
          const line = row.join(' | ').replace(/( \| )+$/, '');
          if (line.replace(/[ |]/g, '') !== '') out.add(`${line}\n`);
        }
      },
      text: (text) => {
        if (inValue && value.length < 100) value.push(text);
      },
    });
  }
  return out.toString().trim();
}

/** OpenDocument text or spreadsheet content: paragraphs and headings as lines, table rows as " | " joined cells. */
function odfText(content: Uint8Array, maxChars: number): string {
  const out = new CappedText(maxChars);
  let inCell = 0;
  let cell: string[] = [];
  let row: string[] = [];
  const emit = (text: string) => (inCell > 0 ? cell.push(text) : out.add(text));
  scanXml(content, {
    open: (name, attributes) => {
      if (name === 'text:tab') emit('\t');
      else if (name === 'text:line-break') emit('\n');
      else if (name === 'text:s') emit(' '.repeat(Math.min(Number(attributes['text:c'] ?? 1) || 1, 20)));
      else if (name === 'table:table-row') row = [];
      else if (name === 'table:table-cell' || name === 'table:covered-table-cell') {
        inCell++;
        cell = [];
      }
    },
    close: (name) => {
      if (name === 'text:p' || name === 'text:h') emit(inCell > 0 ? ' ' : '\n');
      else if (name === 'table:table-cell' || name === 'table:covered-table-cell') {
        inCell = Math.max(0, inCell - 1);
        if (row.length < 1_000) row.push(cell.join('').replace(/\s+/g, ' ').trim());
        cell = [];
      } else if (name === 'table:table-row') {
        const line = row.join(' | ').replace(/( \| )+$/, '');
        if (line.replace(/[ |]/g, '') !== '') out.add(`${line}\n`);
        row = [];
      } else if (name === 'table:table') out.add('\n');
    },
    text: (text) => {
      if (inCell > 0 && cell.length > 1_000) return;
      emit(text);
    },
  });
  return tidy(out.toString());
}
