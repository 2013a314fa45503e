/**
 * The text of a PDF, read by PDF.js in a worker thread of its own: a PDF is untrusted input, and a
 * parser's synchronous loop cannot be interrupted from the thread it runs on. The worker's heap is
 * capped, it is terminated after `timeoutMs`, and it reads at most `maxPages` pages and
 * `maxChars` characters; the caller caps the file's size before it gets here.
 */
import { Worker } from 'node:worker_threads';

export interface PdfLimits {
  timeoutMs: number;
  maxPages: number;
  maxChars: number;
  /** The worker's V8 heap limit in MB. */
  memoryMb: number;
}

export const DEFAULT_PDF_LIMITS: PdfLimits = { timeoutMs: 20_000, maxPages: 500, maxChars: 2_000_000, memoryMb: 256 };

export type PdfText = { ok: true; text: string; title: string | null; pages: number; totalPages: number } | { ok: false; reason: string };

/** Never rejects: a PDF that cannot be read comes back as `{ ok: false, reason }`. */
export function pdfText(bytes: Uint8Array, limits: PdfLimits = DEFAULT_PDF_LIMITS): Promise<PdfText> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PdfText) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      void worker.terminate().catch(() => undefined);
      resolve(result);
    };
    const copy = Uint8Array.from(bytes);
    const worker = new Worker(new URL('./pdf-worker.mjs', import.meta.url), {
      workerData: { bytes: copy.buffer, maxPages: limits.maxPages, maxChars: limits.maxChars },
      transferList: [copy.buffer],
      resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb },
      // Not the parent's `--import tsx`: the entry loads PDF.js before registering tsx (pdf-bounded.mjs).
      execArgv: [],
      stdout: true,
      stderr: true,
    });
    const timer = setTimeout(
      () => finish({ ok: false, reason: `reading the PDF took longer than ${limits.timeoutMs} ms` }),
      limits.timeoutMs,
    );
    worker.on('message', (message: unknown) => finish(parsePdfReply(message)));
    worker.on('error', (error) => finish({ ok: false, reason: `the PDF reader failed: ${error.message.slice(0, 200)}` }));
    worker.on('exit', (code) => finish({ ok: false, reason: `the PDF reader stopped (exit code ${code})` }));
  });
}

function parsePdfReply(message: unknown): PdfText {
  const m = message as Partial<{ ok: boolean; text: unknown; title: unknown; pages: unknown; totalPages: unknown; reason: unknown }>;
  if (m && m.ok === true && typeof m.text === 'string')
    return {
      ok: true,
      text: m.text,
      title: typeof m.title === 'string' && m.title.trim() !== '' ? m.title.trim().slice(0, 200) : null,
      pages: Number(m.pages) || 0,
      totalPages: Number(m.totalPages) || 0,
    };
  return { ok: false, reason: typeof m?.reason === 'string' ? `not a readable PDF: ${m.reason}` : 'not a readable PDF' };
}
