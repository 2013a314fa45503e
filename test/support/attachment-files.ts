/**
 * Attachment fixtures built in the test: a PDF (plain PDF 1.4, Helvetica pages, as
 * fixtures/knowledge/generate.ts writes), Word, Excel and OpenDocument files zipped with fflate,
 * and a customer email carrying them as MIME parts.
 */
import { randomBytes } from 'node:crypto';
import { strToU8, zipSync, type Zippable } from 'fflate';

function escapePdf(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

/** A PDF with one page per entry of `pages`, each page's lines in Helvetica. */
export function buildPdf(pages: ReadonlyArray<readonly string[]>, title = 'Test document'): Buffer {
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ];
  const kids: number[] = [];
  for (const lines of pages) {
    const stream = ['BT', '/F1 11 Tf', '14 TL', '56 780 Td', ...lines.map((l) => `(${escapePdf(l)}) '`), 'ET'].join('\n');
    objects.push(`<< /Length ${Buffer.byteLength(stream, 'latin1')} >>\nstream\n${stream}\nendstream`);
    const contents = objects.length;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contents} 0 R >>`,
    );
    kids.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`;
  objects.push(`<< /Title (${escapePdf(title)}) >>`);
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Info ${objects.length} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

function xmlEscape(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
}

const DOCX_TYPES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`;
const DOCX_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>`;

/** The XML of a Word document whose body is `inner` (w:p elements). */
export function docxDocumentXml(inner: string): string {
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${inner}</w:body></w:document>`;
}

/** A Word document with one paragraph per entry; `extra` adds or replaces entries (hostile variants). */
export function buildDocx(paragraphs: readonly string[], extra: Zippable = {}): Buffer {
  const body = paragraphs.map((p) => `<w:p><w:r><w:t xml:space="preserve">${xmlEscape(p)}</w:t></w:r></w:p>`).join('');
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8(DOCX_TYPES),
      '_rels/.rels': strToU8(DOCX_RELS),
      'word/document.xml': strToU8(docxDocumentXml(body)),
      ...extra,
    }),
  );
}

/** An Excel workbook with one sheet; strings go through the shared-strings table, numbers stay inline. */
export function buildXlsx(sheetName: string, rows: ReadonlyArray<ReadonlyArray<string | number>>): Buffer {
  const shared: string[] = [];
  const cells = rows
    .map(
      (row, r) =>
        `<row r="${r + 1}">${row
          .map((value, c) => {
            const ref = `${String.fromCharCode(65 + c)}${r + 1}`;
            if (typeof value === 'number') return `<c r="${ref}"><v>${value}</v></c>`;
            shared.push(value);
            return `<c r="${ref}" t="s"><v>${shared.length - 1}</v></c>`;
          })
          .join('')}</row>`,
    )
    .join('');
  const ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"';
  return Buffer.from(
    zipSync({
      '[Content_Types].xml': strToU8('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
      'xl/workbook.xml': strToU8(
        `<?xml version="1.0"?><workbook ${ns}><sheets><sheet name="${xmlEscape(sheetName)}" sheetId="1"/></sheets></workbook>`,
      ),
      'xl/sharedStrings.xml': strToU8(
        `<?xml version="1.0"?><sst ${ns}>${shared.map((s) => `<si><t>${xmlEscape(s)}</t></si>`).join('')}</sst>`,
      ),
      'xl/worksheets/sheet1.xml': strToU8(`<?xml version="1.0"?><worksheet ${ns}><sheetData>${cells}</sheetData></worksheet>`),
    }),
  );
}

/** An OpenDocument text with one paragraph per entry. */
export function buildOdt(paragraphs: readonly string[]): Buffer {
  const body = paragraphs.map((p) => `<text:p>${xmlEscape(p)}</text:p>`).join('');
  return Buffer.from(
    zipSync({
      mimetype: strToU8('application/vnd.oasis.opendocument.text'),
      'content.xml': strToU8(
        `<?xml version="1.0"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>${body}</office:text></office:body></office:document-content>`,
      ),
    }),
  );
}

export interface MailPart {
  filename?: string;
  contentType: string;
  content: Buffer;
  /** Extra Content-Type parameters, e.g. `charset=iso-8859-1`. */
  params?: string;
  disposition?: 'attachment' | 'inline';
}

/** A customer email with a text body and the given parts as base64 attachments. */
export function mailWithAttachments(fields: { from?: string; subject?: string; body: string; parts: readonly MailPart[] }): string {
  const boundary = `b-${randomBytes(6).toString('hex')}`;
  const wrap = (b64: string) => b64.replace(/.{1,76}/g, '$&\r\n').trimEnd();
  const lines = [
    `From: ${fields.from ?? 'Alice Okafor <alice@example.com>'}`,
    'To: support@acme.example',
    `Subject: ${fields.subject ?? 'See attached'}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <att-${randomBytes(6).toString('hex')}@example.com>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    fields.body,
  ];
  for (const part of fields.parts) {
    const name = part.filename ? `; name="${part.filename}"` : '';
    lines.push(
      `--${boundary}`,
      `Content-Type: ${part.contentType}${part.params ? `; ${part.params}` : ''}${name}`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: ${part.disposition ?? 'attachment'}${part.filename ? `; filename="${part.filename}"` : ''}`,
      '',
      wrap(part.content.toString('base64')),
    );
  }
  lines.push(`--${boundary}--`, '');
  return lines.join('\r\n');
}
