/**
 * The text of a PDF by PDF.js, within a budget of decoded bytes. Runs only inside a worker thread
 * (the attachment reader pool, src/ingest/attachment-pool.ts, and the knowledge import's PDF
 * worker, pdf-text.ts): it replaces that thread's `DecompressionStream`.
 *
 * Why a budget: PDF.js decodes whole streams into ArrayBuffers, which live outside the worker's V8
 * heap limit (`resourceLimits`), so a 400 KB FlateDecode stream that inflates to 400 MB took the
 * whole process to 1.55 GB RSS. Every decoded byte PDF.js makes goes one of two ways, and both are
 * charged to one budget per document, `MAX_PDF_DECODED_BYTES`, before the memory is taken:
 * - `DecodeStream.ensureBuffer` (Flate, LZW, RunLength, ASCII85/Hex, predictors, CCITT, Crypt,
 *   chained filters: every decoder that grows its output buffer) — PDF.js's worker bundle is loaded
 *   from its source with one line added there (checked on load: if the line is not found, no PDF is
 *   read at all, rather than one read without the bound);
 * - the native `DecompressionStream` PDF.js prefers for Flate (and Brotli), wrapped so that each
 *   output chunk is counted.
 * Past the budget every further charge throws: PDF.js gives up on that stream (or the document), and
 * the reading comes back as `{ ok: false }` with the reason, whatever text PDF.js still produced.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/** Bytes of decoded stream data (buffer growth, counted as allocated) one PDF may make. */
export const MAX_PDF_DECODED_BYTES = 128 * 1024 * 1024;

export interface PdfExtractLimits {
  maxPages: number;
  maxChars: number;
}

export type PdfExtract = { ok: true; text: string; title: string | null; pages: number; totalPages: number } | { ok: false; reason: string; bomb?: true };

/** The line of PDF.js's `DecodeStream.ensureBuffer` before which the charge is added. */
const ENSURE_BUFFER_ALLOC = '    const buffer2 = new Uint8Array(size);\n    buffer2.set(buffer);\n';
const CHARGE_HOOK = '__supportAgentPdfDecodeCharge';

class DecodeBudgetError extends Error {}

const budget = { used: 0, exceeded: false };

function charge(bytes: number): void {
  budget.used += Math.max(0, bytes);
  if (budget.exceeded || budget.used > MAX_PDF_DECODED_BYTES) {
    budget.exceeded = true;
    throw new DecodeBudgetError(`decoded streams over ${MAX_PDF_DECODED_BYTES / (1024 * 1024)} MB`);
  }
}

/** `DecompressionStream` whose output is charged to the budget chunk by chunk. */
function boundedDecompressionStream(native: typeof DecompressionStream): typeof DecompressionStream {
  return class BoundedDecompressionStream {
    readonly readable: DecompressionStream['readable'];
    readonly writable: DecompressionStream['writable'];
    constructor(format: ConstructorParameters<typeof DecompressionStream>[0]) {
      const inner = new native(format);
      this.writable = inner.writable;
      this.readable = inner.readable.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            charge(chunk.byteLength);
            controller.enqueue(chunk);
          },
        }),
      );
    }
  } as unknown as typeof DecompressionStream;
}

type PdfjsModule = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let loaded: Promise<PdfjsModule> | null = null;

/** PDF.js with its worker bundle patched for the budget, loaded once per thread. */
function loadPdfjs(): Promise<PdfjsModule> {
  loaded ??= (async () => {
    const workerPath = createRequire(import.meta.url).resolve('pdfjs-dist/legacy/build/pdf.worker.mjs');
    const source = await readFile(workerPath, 'utf8');
    const at = source.indexOf(ENSURE_BUFFER_ALLOC);
    if (at < 0 || source.indexOf(ENSURE_BUFFER_ALLOC, at + 1) >= 0)
      throw new Error("this PDF.js version's stream decoding cannot be bounded (DecodeStream.ensureBuffer changed)");
    const patched = `${source.slice(0, at)}    globalThis.${CHARGE_HOOK}(size - buffer.byteLength);\n${source.slice(at)}`;
    const g = globalThis as Record<string, unknown>;
    g[CHARGE_HOOK] = charge;
    g.DecompressionStream = boundedDecompressionStream(DecompressionStream);
    // PDF.js in Node runs its "worker" side in this thread when `pdfjsWorker` is set.
    g.pdfjsWorker = await import(`data:text/javascript;base64,${Buffer.from(patched).toString('base64')}`);
    return import('pdfjs-dist/legacy/build/pdf.mjs');
  })();
  return loaded;
}

/** Reads page by page within the page and character caps. Never rejects. */
export async function extractPdfText(bytes: Uint8Array, limits: PdfExtractLimits): Promise<PdfExtract> {
  budget.used = 0;
  budget.exceeded = false;
  let result: PdfExtract;
  try {
    result = await readPages(await loadPdfjs(), bytes, limits);
  } catch (error) {
    result = { ok: false, reason: String((error as Error)?.message ?? error).slice(0, 300) };
  }
  if (budget.exceeded)
    return {
      ok: false,
      reason: `its streams decode to more than ${MAX_PDF_DECODED_BYTES / (1024 * 1024)} MB (a decompression bomb?)`,
      bomb: true,
    };
  return result;
}

async function readPages(pdfjs: PdfjsModule, bytes: Uint8Array, limits: PdfExtractLimits): Promise<PdfExtract> {
  const task = pdfjs.getDocument({
    data: bytes,
    // No fonts, scripts or network: text only.
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  const pdf = await task.promise;
  try {
    const pages: string[] = [];
    let chars = 0;
    const count = Math.min(pdf.numPages, limits.maxPages);
    for (let n = 1; n <= count && chars < limits.maxChars && !budget.exceeded; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      let text = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        text += item.str;
        if (item.hasEOL) text += '\n';
        else if (item.str !== '' && !text.endsWith(' ')) text += ' ';
      }
      // A blank line between pages keeps the page breaks.
      pages.push(text.trim());
      chars += text.length;
      page.cleanup();
    }
    const info = (await pdf.getMetadata().catch(() => null))?.info as { Title?: unknown } | undefined;
    return {
      ok: true,
      text: pages.join('\n\n').slice(0, limits.maxChars),
      pages: count,
      totalPages: pdf.numPages,
      title: typeof info?.Title === 'string' ? info.Title : null,
    };
  } finally {
    await pdf.destroy().catch(() => undefined);
  }
}
