/**
 * Decompression bombs built in the test, never committed: ZIP-based Office files (docx, xlsx, a
 * plain archive) whose entries inflate far past the reader's cap, an archive of 100,000 entries,
 * nested archives, "billion laughs" entity XML, the .docx whose central directory and local headers
 * disagree (finding 1 of issue 27), and PDFs whose streams decode to hundreds of MB (Flate, chained
 * Flate, RunLength; finding 12). Filler is deflated in 1 MB steps by Node's streaming zlib, so
 * building a 1 GB bomb never holds 1 GB.
 */
import { crc32, createDeflate, createDeflateRaw, deflateSync } from 'node:zlib';
import { strToU8 } from 'fflate';
import { buildDocx, docxDocumentXml } from './attachment-files.ts';

const MB = 1024 * 1024;

/** `bytes` of `fill` deflated (raw, as in ZIP, or zlib-wrapped, as PDF's FlateDecode), and its CRC-32. */
export async function deflatedFill(bytes: number, format: 'raw' | 'zlib', fill = 0): Promise<{ data: Uint8Array; crc: number }> {
  const stream = format === 'raw' ? createDeflateRaw({ level: 9 }) : createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => parts.push(chunk));
  const done = new Promise((resolve, reject) => stream.on('end', resolve).on('error', reject));
  const step = Buffer.alloc(MB, fill);
  let crc = 0;
  for (let left = bytes; left > 0; left -= MB) {
    const chunk = left >= MB ? step : step.subarray(0, left);
    crc = crc32(chunk, crc);
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once('drain', resolve));
  }
  stream.end();
  await done;
  return { data: Buffer.concat(parts), crc };
}

export interface ZipEntry {
  name: string;
  /** Stored (0) or deflated (8) bytes as they go in the archive. */
  data: Uint8Array;
  method: 0 | 8;
  size: number;
  crc: number;
}

export function storedEntry(name: string, content: Uint8Array | string): ZipEntry {
  const data = typeof content === 'string' ? strToU8(content) : content;
  return { name, data, method: 0, size: data.length, crc: crc32(data) };
}

export async function deflatedEntry(name: string, inflatedBytes: number, fill = 0x20): Promise<ZipEntry> {
  const { data, crc } = await deflatedFill(inflatedBytes, 'raw', fill);
  return { name, data, method: 8, size: inflatedBytes, crc };
}

function header(signature: number, fields: Array<[number, 2 | 4]>): Buffer {
  const out = Buffer.alloc(4 + fields.reduce((n, [, width]) => n + width, 0));
  out.writeUInt32LE(signature, 0);
  let at = 4;
  for (const [value, width] of fields) {
    if (width === 2) out.writeUInt16LE(value, at);
    else out.writeUInt32LE(value >>> 0, at);
    at += width;
  }
  return out;
}

function local(entry: ZipEntry): Buffer {
  const name = Buffer.from(entry.name, 'utf8');
  // version, flags, method, time, date, crc, compressed, size, name length, extra length
  const fields: Array<[number, 2 | 4]> = [
    [20, 2],
    [0, 2],
    [entry.method, 2],
    [0, 2],
    [0x21, 2],
    [entry.crc, 4],
    [entry.data.length, 4],
    [entry.size, 4],
    [name.length, 2],
    [0, 2],
  ];
  return Buffer.concat([header(0x04034b50, fields), name, entry.data]);
}

function central(entry: ZipEntry, offset: number): Buffer {
  const name = Buffer.from(entry.name, 'utf8');
  const fields: Array<[number, 2 | 4]> = [
    [20, 2],
    [20, 2],
    [0, 2],
    [entry.method, 2],
    [0, 2],
    [0x21, 2],
    [entry.crc, 4],
    [entry.data.length, 4],
    [entry.size, 4],
    [name.length, 2],
    [0, 2],
    [0, 2],
    [0, 2],
    [0, 2],
    [0, 4],
    [offset, 4],
  ];
  return Buffer.concat([header(0x02014b50, fields), name]);
}

/**
 * A ZIP archive. With `hidden`, the local headers hold `entries` but the central directory lists
 * `hidden` instead, whose local headers and data sit after the central directory, where a reader
 * that walks local headers never looks and a reader of the central directory always does.
 */
export function zipArchive(entries: readonly ZipEntry[], hidden?: readonly ZipEntry[]): Buffer {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let at = 0;
  for (const entry of entries) {
    const bytes = local(entry);
    offsets.push(at);
    parts.push(bytes);
    at += bytes.length;
  }
  const listed = hidden ?? entries;
  const centralStart = at;
  const centralSize = listed.reduce((n, e) => n + 46 + Buffer.byteLength(e.name), 0);
  let after = centralStart + centralSize;
  const listedOffsets = hidden ? hidden.map((e) => ((after += local(e).length), after - local(e).length)) : offsets;
  const directory = listed.map((entry, i) => central(entry, listedOffsets[i]!));
  parts.push(...directory);
  if (hidden) parts.push(...hidden.map(local));
  const count = Math.min(listed.length, 0xffff);
  parts.push(
    header(0x06054b50, [
      [0, 2],
      [0, 2],
      [count, 2],
      [count, 2],
      [centralSize, 4],
      [centralStart, 4],
      [0, 2],
    ]),
  );
  return Buffer.concat(parts);
}

const DOCX_TYPES =
  '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>';
const DOCX_RELS =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>';

function docxParagraph(text: string): string {
  return docxDocumentXml(`<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`);
}

/** A plain PDF whose one page's content stream has `filters` and the given (encoded) data. */
export function pdfWithStream(filters: string, data: Uint8Array): Buffer {
  const head = (n: number, body: string) => Buffer.from(`${n} 0 obj\n${body}\nendobj\n`, 'latin1');
  const objects: Buffer[] = [
    head(1, '<< /Type /Catalog /Pages 2 0 R >>'),
    head(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    head(3, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>'),
    Buffer.concat([
      Buffer.from(`4 0 obj\n<< /Length ${data.length} /Filter ${filters} >>\nstream\n`, 'latin1'),
      data,
      Buffer.from('\nendstream\nendobj\n', 'latin1'),
    ]),
    head(5, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n', 'latin1')];
  const offsets: number[] = [];
  let at = parts[0]!.length;
  for (const object of objects) {
    offsets.push(at);
    parts.push(object);
    at += object.length;
  }
  let xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) xref += `${String(offset).padStart(10, '0')} 00000 n \n`;
  xref += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`;
  parts.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(parts);
}

/** RunLength data that decodes to `bytes` of spaces: each 2-byte run makes 128. */
function runLengthFill(bytes: number): Uint8Array {
  const runs = Math.ceil(bytes / 128);
  const out = new Uint8Array(runs * 2 + 1);
  for (let i = 0; i < runs; i++) {
    out[i * 2] = 129; // 257 - 129 = 128 copies of the next byte
    out[i * 2 + 1] = 0x20;
  }
  out[runs * 2] = 128; // end of data
  return out;
}

export interface Bomb {
  name: string;
  filename: string;
  contentType: string;
  content: Buffer;
}

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Every bomb the readers are tried with, each under the 10 MiB ATTACHMENT_MAX_BYTES default. */
export async function buildBombs(): Promise<Bomb[]> {
  const media = await deflatedEntry('word/media/pad.bin', 256 * MB, 0);
  const mediaEntry = (i: number) => ({ ...media, name: `word/media/pad-${i}.bin` });
  const gigabyteXml = await deflatedEntry('word/document.xml', 1024 * MB);
  const gigabyteSheet = { ...gigabyteXml, name: 'xl/worksheets/sheet1.xml' };
  const flate400 = await deflatedFill(400 * MB, 'zlib', 0x20);
  const bombs: Bomb[] = [
    {
      name: 'docx, document.xml inflating to 1 GB',
      filename: 'big.docx',
      contentType: DOCX_TYPE,
      content: zipArchive([storedEntry('[Content_Types].xml', DOCX_TYPES), gigabyteXml]),
    },
    {
      name: 'docx, central directory and local headers disagree (hidden 1 GB document.xml)',
      filename: 'two-faced.docx',
      contentType: DOCX_TYPE,
      content: zipArchive(
        [
          storedEntry('[Content_Types].xml', DOCX_TYPES),
          storedEntry('_rels/.rels', DOCX_RELS),
          storedEntry('word/document.xml', docxParagraph('The visible letter.')),
        ],
        [storedEntry('[Content_Types].xml', DOCX_TYPES), storedEntry('_rels/.rels', DOCX_RELS), gigabyteXml],
      ),
    },
    {
      name: 'docx, 16 media entries of 256 MB each',
      filename: 'media.docx',
      contentType: DOCX_TYPE,
      content: zipArchive([storedEntry('word/document.xml', docxParagraph('x')), ...Array.from({ length: 16 }, (_, i) => mediaEntry(i))]),
    },
    {
      name: 'xlsx, sheet1.xml inflating to 1 GB',
      filename: 'big.xlsx',
      contentType: XLSX_TYPE,
      content: zipArchive([storedEntry('xl/workbook.xml', '<workbook><sheets><sheet name="A"/></sheets></workbook>'), gigabyteSheet]),
    },
    {
      name: 'zip of 100,000 empty entries',
      filename: 'many.zip',
      contentType: 'application/zip',
      content: zipArchive(Array.from({ length: 100_000 }, (_, i) => storedEntry(`e${i}`, ''))),
    },
    {
      name: 'nested archives (a zip of 10 zips of 256 MB bombs)',
      filename: 'nested.zip',
      contentType: 'application/zip',
      content: zipArchive(
        Array.from({ length: 10 }, (_, i) => storedEntry(`inner-${i}.zip`, zipArchive([{ ...mediaEntry(i), name: `bomb-${i}.bin` }]))),
      ),
    },
    {
      name: 'docx, billion-laughs entities in document.xml',
      filename: 'laughs.docx',
      contentType: DOCX_TYPE,
      content: buildDocx([], { 'word/document.xml': strToU8(billionLaughs()) }),
    },
    pdfBomb('PDF, FlateDecode stream decoding to 400 MB', '/FlateDecode', flate400.data),
    pdfBomb('PDF, chained FlateDecode (twice) decoding to 400 MB', '[/FlateDecode /FlateDecode]', doubleFlate(flate400.data)),
    pdfBomb('PDF, RunLengthDecode stream decoding to 512 MB', '/RunLengthDecode', runLengthFill(512 * MB)),
  ];
  return bombs;
}

function doubleFlate(once: Uint8Array): Uint8Array {
  return deflateSync(once, { level: 9 });
}

function pdfBomb(name: string, filters: string, data: Uint8Array): Bomb {
  return { name, filename: 'bomb.pdf', contentType: 'application/pdf', content: pdfWithStream(filters, data) };
}

function billionLaughs(): string {
  const entities = ['<!ENTITY lol "lol">'];
  for (let i = 1; i <= 9; i++) entities.push(`<!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`);
  return `<?xml version="1.0"?><!DOCTYPE w:document [${entities.join('')}]>${docxDocumentXml('<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>')}`;
}
