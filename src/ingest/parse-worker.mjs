// Entry point of a parse worker thread (see parse-pool.ts). Plain JavaScript because a worker
// thread starts without the parent's loader hooks: it registers tsx itself (the product runs
// TypeScript with no build step, in the CLI and under vitest alike), then loads the TypeScript side.
import { register } from 'tsx/esm/api';

register();
await import('./parse-worker-main.ts');
