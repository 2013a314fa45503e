// Entry point of the PDF text worker thread (see pdf-text.ts). Plain JavaScript: it needs nothing
// of the TypeScript side, only PDF.js. Reads one PDF given in workerData and posts its text back,
// page by page, within the page and character caps it was given.
import { parentPort, workerData } from 'node:worker_threads';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

const { bytes, maxPages, maxChars } = workerData;

async function extract() {
  const task = getDocument({
    data: new Uint8Array(bytes),
    // No fonts, scripts or network: text only.
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  const pdf = await task.promise;
  const pages = [];
  let chars = 0;
  const count = Math.min(pdf.numPages, maxPages);
  for (let n = 1; n <= count && chars < maxChars; n++) {
    const page = await pdf.getPage(n);
    const content = await page.getTextContent();
    let text = '';
    for (const item of content.items) {
      if (!('str' in item)) continue;
      text += item.str;
      if (item.hasEOL) text += '\n';
      else if (item.str !== '' && !text.endsWith(' ')) text += ' ';
    }
    // A blank line between the PDF's own lines groups them less than a page would: keep page breaks.
    pages.push(text.trim());
    chars += text.length;
    page.cleanup();
  }
  const title = (await pdf.getMetadata().catch(() => null))?.info?.Title ?? null;
  await pdf.destroy();
  return {
    ok: true,
    text: pages.join('\n\n').slice(0, maxChars),
    pages: count,
    totalPages: pdf.numPages,
    title: typeof title === 'string' ? title : null,
  };
}

extract().then(
  (result) => parentPort.postMessage(result),
  (error) => parentPort.postMessage({ ok: false, reason: String(error?.message ?? error).slice(0, 300) }),
);
