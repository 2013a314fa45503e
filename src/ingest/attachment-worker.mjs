// Entry point of an attachment text worker thread (see attachment-text.ts). Plain JavaScript because
// a worker thread starts without the parent's loader hooks: it registers tsx itself, then loads the
// TypeScript side, which reads the one attachment given in workerData and posts its text back.
import { register } from 'tsx/esm/api';

register();
await import('./attachment-worker-main.ts');
