// Entry point of the knowledge import's PDF text worker thread (see pdf-text.ts). Plain JavaScript
// because a worker thread starts without the parent's loader hooks: it registers tsx itself, then
// loads the TypeScript side, which reads the one PDF given in workerData within the decoding budget
// of pdf-extract.ts and posts its text back.
// PDF.js (bounded) is loaded first, before tsx's hooks exist: see pdf-bounded.mjs.
import './pdf-bounded.mjs';
import { register } from 'tsx/esm/api';

register();
await import('./pdf-worker-main.ts');
