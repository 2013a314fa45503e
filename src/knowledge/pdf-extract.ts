/**
 * The text of a PDF by PDF.js, within a budget of decoded bytes (pdf-bounded.mjs, which loads
 * PDF.js patched for it and must be imported by the worker's entry before tsx: see there). Runs
 * only inside a worker thread: the attachment reader pool (src/ingest/attachment-pool.ts) and the
 * knowledge import's PDF worker (pdf-text.ts). A document over the budget comes back as
 * `{ ok: false, bomb: true }` with the reason, whatever text PDF.js still produced.
 */
import type * as Pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';

export interface PdfExtractLimits {
  maxPages: number;
  maxChars: number;
}

export type PdfExtract =
  { ok: true; text: string; title: string | null; pages: number; totalPages: number } | { ok: false; reason: string; bomb?: true };

type PdfjsModule = typeof Pdfjs;

interface DecodeBudget {
  max: number;
  exceeded: boolean;
  reset(): void;
}

/** What pdf-bounded.mjs left on `globalThis`: PDF.js and its budget, or why it could not load them. */
function boundedPdfjs(): { pdfjs: PdfjsModule; budget: DecodeBudget } | { error: string } {
  const loaded = (globalThis as { __supportAgentPdfjs?: { pdfjs: PdfjsModule; budget: DecodeBudget } | { error: string } })
    .__supportAgentPdfjs;
  return loaded ?? { error: 'the bounded PDF reader was not loaded in this thread (pdf-bounded.mjs)' };
}

/** Reads page by page within the page and character caps. Never rejects. */
export async function extractPdfText(bytes: Uint8Array, limits: PdfExtractLimits): Promise<PdfExtract> {
  const loaded = boundedPdfjs();
  if ('error' in loaded) return { ok: false, reason: loaded.error };
  const { pdfjs, budget } = loaded;
  budget.reset();
  let result: PdfExtract;
  try {
    result = await readPages(pdfjs, budget, bytes, limits);
  } catch (error) {
    result = { ok: false, reason: String((error as Error)?.message ?? error).slice(0, 300) };
  }
  if (budget.exceeded)
    return {
      ok: false,
      reason: `its streams decode to more than ${budget.max / (1024 * 1024)} MB (a decompression bomb?)`,
      bomb: true,
    };
  return result;
}

async function readPages(pdfjs: PdfjsModule, budget: DecodeBudget, bytes: Uint8Array, limits: PdfExtractLimits): Promise<PdfExtract> {
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
