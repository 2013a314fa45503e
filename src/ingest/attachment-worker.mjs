// Entry point of an attachment reader worker thread (see attachment-pool.ts). Plain JavaScript
// because a worker thread starts without the parent's loader hooks: it registers tsx itself, then
// loads the TypeScript side, which reads attachments one at a time and posts their text back.
// PDF.js (bounded) is loaded first, before tsx's hooks exist: see pdf-bounded.mjs.
import '../knowledge/pdf-bounded.mjs';
import { register } from 'tsx/esm/api';

register();
await import('./attachment-worker-main.ts');
