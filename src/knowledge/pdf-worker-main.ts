/**
 * The knowledge import's PDF worker body: reads the one PDF given in `workerData` (pdf-extract.ts,
 * within its decoding budget) and posts the result back; pdf-text.ts terminates the thread after.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { extractPdfText } from './pdf-extract.ts';

const port = parentPort;
if (!port) throw new Error('pdf-worker-main.ts runs only as a worker thread');

const { bytes, maxPages, maxChars } = workerData as { bytes: ArrayBuffer; maxPages: number; maxChars: number };
port.postMessage(await extractPdfText(new Uint8Array(bytes), { maxPages, maxChars }));
