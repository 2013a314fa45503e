/**
 * `support-agent kb import`: help-center files (Markdown, HTML, plain text, PDF) into the
 * knowledge base. A document is keyed by its path relative to the folder given (its file name
 * when a file is given); one whose bytes, language and tags are unchanged is left as it is, a
 * changed one gets new passages, and `prune` removes every document this import did not see.
 */
import { createHash } from 'node:crypto';
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../errors.ts';
import { kbFormatOf, normaliseLang, normaliseTags, parseKbDocument, type KbFormat } from '../memory/knowledge.ts';
import { DEFAULT_PDF_LIMITS, pdfText, type PdfLimits } from '../knowledge/pdf-text.ts';
import type { Db } from '../store/database.ts';
import type { SqlExecutor } from '../store/sql.ts';
import type { Embedder } from '../llm/embeddings.ts';
import type { Logger } from '../logger.ts';
import { embedPendingPassages, type EmbedReport } from './knowledge-search.ts';
import { listKbDocuments, removeKbDocuments, storeKbDocument } from '../store/knowledge.ts';

export interface KbImportOptions {
  /** Remove documents not among the files of this import. */
  prune?: boolean;
  /** The language of documents that do not say their own. */
  lang?: string;
  /** Tags added to every document of this import. */
  tags?: readonly string[];
  /** A larger file is skipped (reported), never read whole. */
  maxFileBytes?: number;
  pdf?: PdfLimits;
  /** Give passages vectors after storing (OPENAI_EMBEDDING_MODEL): new and changed ones, or all after a model change. */
  embeddings?: { embedder: Embedder; batch: number; logger: Logger; sql: SqlExecutor };
  /** Called after each file is read (`kb import` draws its progress with it). */
  progress?: (done: number, total: number) => void;
}

export const KB_MAX_FILE_BYTES = 20 * 1024 * 1024;

export interface KbImportReport {
  created: string[];
  updated: string[];
  unchanged: string[];
  removed: number;
  skipped: Array<{ source: string; reason: string }>;
  passages: number;
  /** What the embeddings pass did (null when embeddings are not configured). */
  embeddings: EmbedReport | null;
}

interface KbFile {
  file: string;
  source: string;
  format: KbFormat;
}

export async function importKnowledge(
  db: Db,
  inputs: readonly string[],
  options: KbImportOptions = {},
  now = new Date(),
): Promise<KbImportReport> {
  const report: KbImportReport = { created: [], updated: [], unchanged: [], removed: 0, skipped: [], passages: 0, embeddings: null };
  const { files, ignored } = await knowledgeFiles(inputs);
  for (const source of ignored) report.skipped.push({ source, reason: 'not a Markdown, HTML, text or PDF file (.md, .html, .txt, .pdf)' });
  const settings = importSettings(options);
  for (const [index, { file, source, format }] of files.entries()) {
    const bytes = await readCapped(file, settings.maxBytes);
    if (bytes) await importOne(db, report, { source, format, bytes, fileName: path.basename(file) }, settings, now);
    else report.skipped.push({ source, reason: `larger than ${settings.maxBytes} bytes` });
    options.progress?.(index + 1, files.length);
  }
  if (options.prune) {
    const seen = new Set(files.map((f) => f.source));
    const gone = (await listKbDocuments(db)).filter((d) => !seen.has(d.source)).map((d) => d.id);
    report.removed = await removeKbDocuments(db, gone);
  }
  if (options.embeddings) report.embeddings = await embedPending(options.embeddings, now);
  return report;
}

/**
 * One uploaded file (the console's import form): the same reading, splitting and storing as a
 * file on disk, keyed by its file name. The caller has already capped its size.
 */
export async function importKnowledgeUpload(
  db: Db,
  upload: { name: string; bytes: Uint8Array },
  options: KbImportOptions = {},
  now = new Date(),
): Promise<KbImportReport> {
  const report: KbImportReport = { created: [], updated: [], unchanged: [], removed: 0, skipped: [], passages: 0, embeddings: null };
  const fileName = path
    .basename(upload.name.replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .slice(0, 200);
  const format = kbFormatOf(fileName);
  if (!format)
    throw new AppError('INPUT_INVALID', `${fileName || 'the file'}: not a Markdown, HTML, text or PDF file (.md, .html, .txt, .pdf)`);
  const settings = importSettings(options);
  if (upload.bytes.length > settings.maxBytes) {
    report.skipped.push({ source: fileName, reason: `larger than ${settings.maxBytes} bytes` });
    return report;
  }
  await importOne(db, report, { source: fileName, format, bytes: Buffer.from(upload.bytes), fileName }, settings, now);
  if (options.embeddings) report.embeddings = await embedPending(options.embeddings, now);
  return report;
}

function importSettings(options: KbImportOptions): { defaultLang: string | null; extraTags: string[]; maxBytes: number; pdf: PdfLimits } {
  const defaultLang = normaliseLang(options.lang);
  if (options.lang && !defaultLang) throw new AppError('USAGE', `--lang: "${options.lang.slice(0, 20)}" is not a two-letter language code`);
  return {
    defaultLang,
    extraTags: normaliseTags(options.tags ?? []),
    maxBytes: options.maxFileBytes ?? KB_MAX_FILE_BYTES,
    pdf: options.pdf ?? DEFAULT_PDF_LIMITS,
  };
}

async function importOne(
  db: Db,
  report: KbImportReport,
  file: { source: string; format: KbFormat; bytes: Buffer; fileName: string },
  settings: ReturnType<typeof importSettings>,
  now: Date,
): Promise<void> {
  const { source, format, bytes } = file;
  let content: string;
  let pdfTitle: string | null = null;
  if (format === 'pdf') {
    const pdf = await pdfText(bytes, settings.pdf);
    if (!pdf.ok) {
      report.skipped.push({ source, reason: pdf.reason });
      return;
    }
    content = pdf.text;
    pdfTitle = pdf.title;
  } else {
    content = new TextDecoder('utf-8').decode(bytes);
  }
  const fallback = file.fileName.replace(/\.[^.]+$/, '').replace(/[-_]+/g, ' ');
  const parsed = parseKbDocument(content, format, pdfTitle ?? fallback);
  if (parsed.passages.length === 0) {
    report.skipped.push({ source, reason: 'no text' });
    return;
  }
  const outcome = await storeKbDocument(
    db,
    {
      source,
      title: parsed.title,
      format,
      lang: parsed.lang ?? settings.defaultLang,
      tags: normaliseTags([...parsed.tags, ...settings.extraTags]),
      contentHash: createHash('sha256').update(bytes).digest('hex'),
      bytes: bytes.length,
      passages: parsed.passages,
    },
    now,
  );
  report[outcome.kind].push(source);
  report.passages += parsed.passages.length;
}

function embedPending(embeddings: NonNullable<KbImportOptions['embeddings']>, now: Date): Promise<EmbedReport> {
  return embedPendingPassages(embeddings.sql, embeddings.embedder, embeddings.batch, embeddings.logger, () => now);
}

/** The files to import, each with its source key, sorted; files of other kinds in a folder are listed as ignored. */
async function knowledgeFiles(inputs: readonly string[]): Promise<{ files: KbFile[]; ignored: string[] }> {
  const files = new Map<string, KbFile>();
  const ignored: string[] = [];
  for (const input of inputs) {
    const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
      throw new AppError('NOT_FOUND', `${input}: ${error.code === 'ENOENT' ? 'no such file or folder' : error.message}`);
    });
    if (info.isDirectory()) {
      const entries = await readdir(input, { withFileTypes: true, recursive: true });
      for (const entry of entries) {
        if (!entry.isFile()) continue;
        const format = kbFormatOf(entry.name);
        const file = path.join(entry.parentPath, entry.name);
        const source = path.relative(input, file).split(path.sep).join('/');
        if (format) files.set(source, { file, source, format });
        else if (!entry.name.startsWith('.')) ignored.push(source);
      }
    } else {
      const format = kbFormatOf(input);
      if (!format) throw new AppError('USAGE', `${input}: not a Markdown, HTML, text or PDF file (.md, .html, .txt, .pdf)`);
      files.set(path.basename(input), { file: input, source: path.basename(input), format });
    }
  }
  return { files: [...files.values()].sort((a, b) => a.source.localeCompare(b.source)), ignored: ignored.sort() };
}

/** The file's bytes, or null when it is larger than `max` (only `max + 1` bytes are ever read). */
async function readCapped(file: string, max: number): Promise<Buffer | null> {
  const handle = await open(file, 'r');
  try {
    // The size only sizes the buffer: a file that grows meanwhile is still cut at max + 1.
    const { size } = await handle.stat();
    if (size > max) return null;
    const buffer = Buffer.alloc(size + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return length > max || length > size ? null : buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}
