// PDF.js with a budget of decoded bytes, loaded into a worker thread before tsx's loader hooks are
// registered (attachment-worker.mjs, pdf-worker.mjs): through those hooks PDF.js's 2.5 MB bundles
// cost each worker about 300 MB more RSS. Plain JavaScript for that reason; pdf-extract.ts (the
// TypeScript side) finds what this module loads on `globalThis.__supportAgentPdfjs`.
//
// Why a budget: PDF.js decodes whole streams into ArrayBuffers, which live outside the worker's V8
// heap limit, so a 400 KB FlateDecode stream that inflated to 400 MB took the process to 1.55 GB
// RSS. Every decoded byte PDF.js makes is charged, before the memory is taken, to one budget per
// document (MAX_PDF_DECODED_BYTES):
// - DecodeStream.ensureBuffer (Flate, LZW, RunLength, ASCII85/Hex, predictors, CCITT, Crypt,
//   chained filters: every decoder that grows its output buffer) — the worker bundle is loaded from
//   its source with one line added there, checked on load: if the line is not found, no PDF is read
//   at all, rather than one read without the bound;
// - the native DecompressionStream PDF.js prefers for Flate, wrapped so each output chunk is counted.
// Past the budget every further charge throws, so PDF.js gives up on that stream or document.
import { Buffer } from 'node:buffer';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { TransformStream } from 'node:stream/web';

/** Bytes of decoded stream data (buffer growth, counted as allocated) one PDF may make. */
const MAX_PDF_DECODED_BYTES = 128 * 1024 * 1024;
const ENSURE_BUFFER_ALLOC = '    const buffer2 = new Uint8Array(size);\n    buffer2.set(buffer);\n';
const CHARGE_HOOK = '__supportAgentPdfDecodeCharge';

const budget = {
  max: MAX_PDF_DECODED_BYTES,
  used: 0,
  exceeded: false,
  reset() {
    budget.used = 0;
    budget.exceeded = false;
  },
  charge(bytes) {
    budget.used += Math.max(0, bytes);
    if (budget.exceeded || budget.used > MAX_PDF_DECODED_BYTES) {
      budget.exceeded = true;
      throw new Error(`decoded streams over ${MAX_PDF_DECODED_BYTES / (1024 * 1024)} MB`);
    }
  },
};

const NativeDecompressionStream = globalThis.DecompressionStream;

/** DecompressionStream whose output is charged to the budget chunk by chunk. */
class BoundedDecompressionStream {
  constructor(format) {
    const inner = new NativeDecompressionStream(format);
    this.writable = inner.writable;
    this.readable = inner.readable.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          budget.charge(chunk.byteLength);
          controller.enqueue(chunk);
        },
      }),
    );
  }
}

async function load() {
  const workerPath = createRequire(import.meta.url).resolve('pdfjs-dist/legacy/build/pdf.worker.mjs');
  const source = await readFile(workerPath, 'utf8');
  const at = source.indexOf(ENSURE_BUFFER_ALLOC);
  if (at < 0 || source.indexOf(ENSURE_BUFFER_ALLOC, at + 1) >= 0) {
    return { error: "this PDF.js version's stream decoding cannot be bounded (DecodeStream.ensureBuffer changed)" };
  }
  const patched = `${source.slice(0, at)}    globalThis.${CHARGE_HOOK}(size - buffer.byteLength);\n${source.slice(at)}`;
  globalThis[CHARGE_HOOK] = budget.charge;
  globalThis.DecompressionStream = BoundedDecompressionStream;
  // PDF.js in Node runs its "worker" side in this thread when `pdfjsWorker` is set.
  globalThis.pdfjsWorker = await import(`data:text/javascript;base64,${Buffer.from(patched).toString('base64')}`);
  return { pdfjs: await import('pdfjs-dist/legacy/build/pdf.mjs'), budget };
}

globalThis.__supportAgentPdfjs = await load().catch((error) => ({ error: String(error?.message ?? error) }));
