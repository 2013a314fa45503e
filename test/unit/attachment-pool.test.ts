/**
 * The warm attachment reader pool (attachment-pool.ts on worker-pool.ts): a reader that hangs, runs
 * out of memory or exits costs that file only (its reason is what the attachment records), the
 * next file is read by a replacement, never more workers exist than configured, and files of
 * different messages are read side by side. A stand-in worker misbehaves on command; the real
 * worker reads real files. No timing assertions: the timeouts are the pool's own.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createReaderPool } from '../../src/ingest/attachment-pool.ts';
import type { ReaderRequest, ReaderResult } from '../../src/ingest/attachment-reader.ts';
import type { PoolLimits, WorkerPool } from '../../src/ingest/worker-pool.ts';
import { silentLogger } from '../../src/logger.ts';
import { buildDocx, buildPdf } from '../support/attachment-files.ts';

const STAND_IN = new URL('../support/misbehaving-reader-worker.mjs', import.meta.url);
const pools: Array<WorkerPool<ReaderRequest, ReaderResult>> = [];

function pool(limits: Partial<PoolLimits> = {}, entry?: URL): WorkerPool<ReaderRequest, ReaderResult> {
  const created = createReaderPool({ workers: 1, timeoutMs: 20_000, memoryMb: 256, ...limits }, silentLogger, entry);
  pools.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

const file = (text: string): ReaderRequest => ({ kind: 'text', bytes: Buffer.from(text), maxChars: 1_000 });
const readBy = (result: ReaderResult) => {
  if (!result.ok) throw new Error(result.reason);
  return result.text.slice(result.text.lastIndexOf(' by ') + 4);
};

describe('a reader that fails costs that file only', () => {
  it.each([
    ['hangs', 'SPIN', { timeoutMs: 1_500 }, 'reading it took longer than ATTACHMENT_TIMEOUT (1500 ms)'],
    ['runs out of heap', 'ALLOC', { memoryMb: 64 }, 'reading it needed more than ATTACHMENT_WORKER_MEMORY (64 MB)'],
    ['exits', 'EXIT', {}, 'the reader failed (the attachment reader worker exited with code 3)'],
  ])(
    'a reader that %s: the file is skipped with the reason, the next one is read by a new worker',
    async (_name, command, limits, reason) => {
      const p = pool(limits, STAND_IN);
      const before = readBy(await p.run(file('first')));
      expect(await p.run(file(command))).toEqual({ ok: false, reason });
      const after = readBy(await p.run(file('next')));
      expect(after).not.toBe(before);
      expect(p.size).toBe(1);
    },
  );

  it('never runs more workers than configured, and reads files of different messages side by side', async () => {
    const p = pool({ workers: 2, timeoutMs: 600_000 }, STAND_IN);
    const order: string[] = [];
    const stuck = p.run(file('SPIN')).then((result) => order.push(`stuck: ${result.ok ? '' : result.reason}`));
    const others = Promise.all(Array.from({ length: 6 }, (_, i) => p.run(file(`file ${i}`)).then(() => order.push(`file ${i}`))));
    expect(p.size).toBeLessThanOrEqual(2);
    await others; // six files read by the other worker while one hangs
    expect(order).toHaveLength(6);
    expect(p.size).toBe(2);
    await p.close();
    await stuck;
    expect(order[6]).toBe('stuck: the attachment readers were stopped while reading it');
  });
});

describe('the real reader worker, kept warm', () => {
  it('reads a PDF, a Word file and text one after the other in the same worker', async () => {
    const p = pool();
    const pdf = await p.run({ kind: 'pdf', bytes: buildPdf([['Invoice 4410']]), maxChars: 1_000 });
    const docx = await p.run({ kind: 'office', bytes: buildDocx(['Order 7781 arrived broken.']), maxChars: 1_000 });
    const text = await p.run(file('plain text'));
    expect([pdf, docx, text]).toEqual([
      { ok: true, format: 'pdf', text: 'Invoice 4410', note: '1 page' },
      { ok: true, format: 'docx', text: 'Order 7781 arrived broken.' },
      { ok: true, format: 'text', text: 'plain text' },
    ]);
    expect(p.size).toBe(1);
  }, 60_000);
});
