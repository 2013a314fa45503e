/**
 * A reader worker's loop (attachment-pool.ts): reads one attachment at a time (attachment-reader.ts)
 * and answers by structured clone. Says `ready` once its modules are loaded, so the pool can tell a
 * worker that cannot start from a file that kills one.
 */
import { parentPort } from 'node:worker_threads';
import type { ReaderWorkerRequest } from './attachment-pool.ts';
import { readAttachmentText } from './attachment-reader.ts';
import type { PoolReply } from './worker-pool.ts';

const port = parentPort;
if (!port) throw new Error('attachment-worker-main.ts runs only as a worker thread');

port.on('message', (request: ReaderWorkerRequest) => {
  void readAttachmentText(request).then((result) => port.postMessage({ type: 'done', id: request.id, result } satisfies PoolReply));
});
port.postMessage({ type: 'ready' } satisfies PoolReply);
