/**
 * The text of Office documents: Word (.docx), Excel (.xlsx) and OpenDocument text and spreadsheets
 * (.odt, .ods), read from their XML by htmlparser2's streaming tokenizer in XML mode (no tree, no
 * recursion, so deep nesting costs nothing). The archive is opened by attachment-zip.ts only, and
 * the XML parsed here is exactly the entries it measured: no second ZIP reader (mammoth was one)
 * that could see other entries than the ones that passed the limits. Output stops growing at
 * `maxChars`; XML is decoded in 1 MB slices, so no single string is as large as an inflated entry.
 */
import { Parser } from 'htmlparser2';
import type { ReaderResult } from './attachment-reader.ts';
import { unzipBounded, ZipLimitError, type ZipLimits } from './attachment-zip.ts';

/** At most this many spreadsheet shared strings are kept. */
const MAX_SHARED_STRINGS = 200_000;

/** The entries any of the formats read; every other entry is inflated (and counted) but not kept. */
function wantedEntry(name: string): boolean {
  return (
    name === 'mimetype' ||
    name === 'content.xml' ||
    name === 'word/document.xml' ||
    name === 'xl/workbook.xml' ||
    name === 'xl/sharedStrings.xml' ||
    /^xl\/worksheets\/sheet\d{1,4}\.xml$/.test(name)
  );
}

/** Reads an Office document's text; a ZIP that is none of them, or breaks a limit, comes back with the reason. */
export function officeText(bytes: Uint8Array, maxChars: number, limits?: ZipLimits): ReaderResult {
  let entries: Map<string, Uint8Array>;
  try {
    entries = unzipBounded(bytes, wantedEntry, limits).entries;
  } catch (error) {
    if (error instanceof ZipLimitError) return { ok: false, reason: error.message };
    return { ok: false, reason: `it is not a readable Office document (${describeZipError(error)})` };
  }
  const document = entries.get('word/document.xml');
  if (document) return { ok: true, format: 'docx', text: docxText(document, maxChars) };
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

/**
 * A Word body as text: a paragraph per block (a blank line between, as Word's own plain-text
 * export), `w:tab` and `w:br`/`w:cr` as tab and line break, table rows as " | " joined cells. Only
 * `w:t` runs count: deleted text (`w:delText`) and field codes (`w:instrText`) are not the reader's.
 */
function docxText(xml: Uint8Array, maxChars: number): string {
  const out = new CappedText(maxChars);
  let inText = false;
  let paragraph: string[] = [];
  let cellDepth = 0;
  let cell: string[] = [];
  let row: string[] = [];
  const endParagraph = () => {
    const text = paragraph.join('');
    paragraph = [];
    if (cellDepth > 0) {
      if (cell.length < 1_000) cell.push(text);
    } else out.add(`${text}\n\n`);
  };
  scanXml(xml, {
    open: (name) => {
      if (name === 'w:t') inText = true;
      else if (name === 'w:tab') paragraph.push('\t');
      else if (name === 'w:br' || name === 'w:cr') paragraph.push('\n');
      else if (name === 'w:noBreakHyphen') paragraph.push('-');
      else if (name === 'w:tr') row = [];
      else if (name === 'w:tc') {
        cellDepth++;
        cell = [];
      }
    },
    close: (name) => {
      if (name === 'w:t') inText = false;
      else if (name === 'w:p') endParagraph();
      else if (name === 'w:tc') {
        cellDepth = Math.max(0, cellDepth - 1);
        if (row.length < 1_000) row.push(cell.join(' ').replace(/\s+/g, ' ').trim());
        cell = [];
      } else if (name === 'w:tr' && cellDepth === 0) {
        const line = row.join(' | ').replace(/( \| )+$/, '');
        if (line.replace(/[ |]/g, '') !== '') out.add(`${line}\n`);
        row = [];
      } else if (name === 'w:tbl' && cellDepth === 0) out.add('\n');
    },
    text: (text) => {
      if (inText && paragraph.length < 10_000 && !out.full) paragraph.push(text);
    },
  });
  if (paragraph.length > 0) endParagraph();
  return tidy(out.toString());
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
