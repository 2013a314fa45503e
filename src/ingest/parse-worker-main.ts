/**
 * The parse worker's loop: reads one message at a time for the pool (parse-pool.ts) and answers by
 * structured clone. Says `ready` once its modules are loaded, so the pool can tell a worker that
 * cannot start from a message that kills one.
 */
import { parentPort } from 'node:worker_threads';
import { readHeaders, readMessage } from './read-message.ts';
import type { WorkerReply, WorkerRequest } from './parse-pool.ts';

const port = parentPort;
if (!port) throw new Error('parse-worker-main.ts runs only as a worker thread');

port.on('message', (request: WorkerRequest) => {
  const raw = Buffer.from(request.raw.buffer, request.raw.byteOffset, request.raw.byteLength);
  const work = request.kind === 'headers' ? readHeaders(raw).then((parsed) => ({ parsed, text: '' })) : readMessage(raw, request.files);
  work.then(
    (result) => port.postMessage({ type: 'done', id: request.id, result } satisfies WorkerReply),
    (error: unknown) =>
      port.postMessage({
        type: 'done',
        id: request.id,
        result: { parsed: { ok: false, reason: `unparseable: ${String(error)}`.slice(0, 300) }, text: '' },
      } satisfies WorkerReply),
  );
});
port.postMessage({ type: 'ready' } satisfies WorkerReply);
