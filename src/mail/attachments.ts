/**
 * Attachments as the model sees them: which format a file is (by its first bytes before its name,
 * and its name before its declared Content-Type, since senders' clients get the type wrong), and the
 * text block stored with the message and offered in the prompt: each file named with its size, its
 * text when it was read, an image by name, and why anything else was not read. Pure.
 */
import type { AttachmentExtraction, AttachmentInfo } from './parse-message.ts';

/** The formats whose text is read; `office` is a ZIP told apart by its entries (docx, xlsx, odt, ods). */
export type AttachmentKind = 'pdf' | 'office' | 'csv' | 'tsv' | 'text' | 'html' | 'image' | 'legacy-office' | 'unsupported';

const IMAGE_EXTENSIONS = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp', 'tif', 'tiff', 'heic', 'heif', 'avif', 'svg', 'ico']);
const OFFICE_EXTENSIONS = new Set(['docx', 'docm', 'xlsx', 'xlsm', 'odt', 'ods']);
const TEXT_EXTENSIONS = new Set(['txt', 'text', 'log', 'md', 'markdown', 'json', 'xml', 'yaml', 'yml', 'ini', 'cfg', 'conf', 'eml']);
const OFFICE_TYPES =
  /^application\/(vnd\.openxmlformats-officedocument\.(wordprocessingml|spreadsheetml)|vnd\.ms-(word|excel)\.[a-z.]*macroenabled|vnd\.oasis\.opendocument\.(text|spreadsheet))/;

function extensionOf(filename: string | null): string {
  const match = /\.([A-Za-z0-9]{1,10})$/.exec(filename ?? '');
  return match ? match[1]!.toLowerCase() : '';
}

function startsWith(bytes: Uint8Array, signature: readonly number[], at = 0): boolean {
  if (bytes.length < at + signature.length) return false;
  return signature.every((b, i) => bytes[at + i] === b);
}

/** The media type of a PNG, JPEG, GIF or WebP image by its magic bytes (what a vision model takes); null otherwise. */
export function imageMediaType(bytes: Uint8Array): 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | null {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38, 0x37, 0x61]) || startsWith(bytes, [0x47, 0x49, 0x46, 0x38, 0x39, 0x61]))
    return 'image/gif';
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return 'image/webp';
  return null;
}

/** The format of a file by its magic bytes, when they say (null when they do not). */
function kindFromBytes(bytes: Uint8Array): AttachmentKind | null {
  // A PDF's header may follow some junk; readers accept it within the first KB.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 1024)).toString('latin1');
  if (head.includes('%PDF-')) return 'pdf';
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) return 'office';
  // OLE compound file: Word 97-2003, Excel 97-2003, or an encrypted (password-protected) OOXML file.
  if (startsWith(bytes, [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])) return 'legacy-office';
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47]) || startsWith(bytes, [0xff, 0xd8, 0xff]) || startsWith(bytes, [0x47, 0x49, 0x46, 0x38]))
    return 'image';
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return 'image';
  return null;
}

/**
 * What a file is: its first bytes decide when they are a known signature, else its file name's
 * extension, else its declared Content-Type. `bytes` is null when the file was not kept (an image,
 * or larger than the cap).
 */
export function attachmentKind(info: Pick<AttachmentInfo, 'filename' | 'contentType'>, bytes: Uint8Array | null): AttachmentKind {
  const fromBytes = bytes ? kindFromBytes(bytes) : null;
  if (fromBytes) return fromBytes;
  const ext = extensionOf(info.filename);
  const type = info.contentType;
  if (IMAGE_EXTENSIONS.has(ext) || (ext === '' && type.startsWith('image/'))) return 'image';
  if (ext === 'pdf') return 'pdf';
  if (OFFICE_EXTENSIONS.has(ext)) return 'office';
  if (ext === 'doc' || ext === 'xls') return 'legacy-office';
  if (ext === 'csv') return 'csv';
  if (ext === 'tsv' || ext === 'tab') return 'tsv';
  if (ext === 'html' || ext === 'htm') return 'html';
  if (TEXT_EXTENSIONS.has(ext)) return 'text';
  if (type === 'application/pdf') return 'pdf';
  if (OFFICE_TYPES.test(type)) return 'office';
  if (type === 'text/csv') return 'csv';
  if (type === 'text/tab-separated-values') return 'tsv';
  if (type === 'text/html') return 'html';
  if (type.startsWith('text/') || type === 'application/json' || type === 'application/xml') return 'text';
  if (type.startsWith('image/')) return 'image';
  return 'unsupported';
}

/** A size as people read it: "512 B", "240 KB", "3.4 MB". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A file name fit for one line of the prompt (no brackets or line breaks that could pass for markers). */
function displayName(info: Pick<AttachmentInfo, 'filename'>): string {
  const name = (info.filename ?? '')
    .replace(/[\r\n\t[\]<>]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 120);
  return name === '' ? '(unnamed)' : name;
}

/** An attachment with what reading it gave, and its text when there is some. */
export interface ReadAttachment {
  info: AttachmentInfo;
  extraction: AttachmentExtraction;
  text: string;
}

/** The one-line heading of an attachment in the stored text and the prompt. */
export function attachmentHeading(info: AttachmentInfo, extraction: AttachmentExtraction): string {
  const name = displayName(info);
  const size = formatBytes(info.size);
  if (extraction.status === 'image') return `[image: ${name}, ${size}]`;
  if (extraction.status === 'skipped') return `[file: ${name}, ${size}: skipped, because ${extraction.reason ?? 'it could not be read'}]`;
  return `[file: ${name}, ${size}, ${extraction.kind}${extraction.reason ? `; ${extraction.reason}` : ''}]`;
}

/**
 * The attachments' block stored with the message (`Message.attachmentText`): a heading per file and
 * the text read from it. Empty when the message has no attachment worth naming.
 */
export function renderAttachmentText(read: readonly ReadAttachment[]): string {
  const blocks: string[] = [];
  for (const { info, extraction, text } of read) {
    const heading = attachmentHeading(info, extraction);
    blocks.push(text.trim() === '' ? heading : `${heading}\n${text.trim()}`);
  }
  return blocks.join('\n\n');
}
