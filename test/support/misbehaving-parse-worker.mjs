// A stand-in parse worker for test/unit/parse-pool.test.ts: it speaks the pool's protocol
// (parse-pool.ts) but misbehaves on command, the first bytes of the message saying how:
// "SPIN" loops forever, "ALLOC" allocates until its heap limit kills it, "EXIT" exits, "THROW"
// throws from the message handler; anything else is answered as an ordinary parsed message.
import { Buffer } from 'node:buffer';
import { parentPort, threadId } from 'node:worker_threads';

parentPort.on('message', (request) => {
  const text = Buffer.from(request.raw.buffer, request.raw.byteOffset, request.raw.byteLength).toString('latin1');
  if (text.startsWith('SPIN')) for (;;);
  if (text.startsWith('ALLOC')) {
    const hoard = [];
    for (;;) hoard.push('x'.repeat(1024) + hoard.length);
  }
  if (text.startsWith('EXIT')) process.exit(3);
  if (text.startsWith('THROW')) throw new Error('thrown by the stand-in worker');
  parentPort.postMessage({
    type: 'done',
    id: request.id,
    result: { parsed: { ok: false, reason: `echo ${request.kind} ${text} from ${threadId}` }, text: '' },
  });
});
parentPort.postMessage({ type: 'ready' });
