// A stand-in attachment reader worker for test/unit/attachment-pool.test.ts: it speaks the pool's
// protocol (worker-pool.ts) but misbehaves on command, the first bytes of the file saying how:
// "SPIN" loops forever, "ALLOC" allocates until its heap limit kills it, "EXIT" exits; anything
// else is answered as text read, naming the thread that read it.
import { Buffer } from 'node:buffer';
import { parentPort, threadId } from 'node:worker_threads';

parentPort.on('message', (request) => {
  const text = Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength).toString('latin1');
  if (text.startsWith('SPIN')) for (;;);
  if (text.startsWith('ALLOC')) {
    const hoard = [];
    for (;;) hoard.push('x'.repeat(1024) + hoard.length);
  }
  if (text.startsWith('EXIT')) process.exit(3);
  parentPort.postMessage({ type: 'done', id: request.id, result: { ok: true, format: 'text', text: `${text} read by ${threadId}` } });
});
parentPort.postMessage({ type: 'ready' });
