/**
 * The attachment worker's body: reads the one attachment given in `workerData` (attachment-reader.ts)
 * and posts the result back. The thread is terminated after it, or when it runs out of time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readAttachmentText, type ReaderRequest } from './attachment-reader.ts';

const port = parentPort;
if (!port) throw new Error('attachment-worker-main.ts runs only as a worker thread');

const request = workerData as ReaderRequest;
port.postMessage(await readAttachmentText({ ...request, bytes: new Uint8Array(request.bytes) }));
