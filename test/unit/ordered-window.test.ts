import { describe, expect, it } from 'vitest';
import { runOrderedWindow } from '../../src/ingest/ordered-window.ts';

/** Items are key lists; each run waits until the test releases it, so the order of events shows what ran side by side. */
function harness(items: string[][], maxSideBySide: number, failAt: number | null = null) {
  const log: string[] = [];
  const releases = new Map<number, () => void>();
  const started = new Set<number>();
  const promise = runOrderedWindow(items, {
    prepare: async (keys) => keys,
    keysOf: (keys) => keys,
    run: (_keys, _prepared, index) =>
      new Promise<number>((resolve, reject) => {
        started.add(index);
        log.push(`start ${index}`);
        releases.set(index, () => (index === failAt ? reject(new Error(`item ${index} failed`)) : resolve(index * 10)));
      }),
    onDone: (result, index) => void log.push(`done ${index}=${result}`),
    maxSideBySide,
  });
  const settle = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return { log, started, promise, settle, release: (i: number) => releases.get(i)!() };
}

describe('the ordered window', () => {
  it('runs unrelated items side by side up to the limit, reports strictly in order', async () => {
    const h = harness([['a'], ['b'], ['c'], ['d']], 2);
    await h.settle();
    expect([...h.started]).toEqual([0, 1]);
    h.release(1);
    await h.settle();
    expect([...h.started]).toEqual([0, 1, 2]);
    expect(h.log.filter((l) => l.startsWith('done'))).toEqual([]);
    h.release(0);
    await h.settle();
    h.release(2);
    await h.settle();
    h.release(3);
    expect(await h.promise).toEqual([0, 10, 20, 30]);
    expect(h.log.filter((l) => l.startsWith('done'))).toEqual(['done 0=0', 'done 1=10', 'done 2=20', 'done 3=30']);
  });

  it('starts an item only after every earlier item it shares a key with has finished', async () => {
    const h = harness([['x'], ['y'], ['x', 'z']], 4);
    await h.settle();
    expect([...h.started]).toEqual([0, 1]);
    h.release(1);
    await h.settle();
    expect(h.started.has(2)).toBe(false);
    h.release(0);
    await h.settle();
    expect(h.started.has(2)).toBe(true);
    h.release(2);
    await h.promise;
  });

  it('stops at a failure: what came before is reported, nothing after, and the failure is thrown', async () => {
    const h = harness([['a'], ['b'], ['c']], 1, 1);
    await h.settle();
    h.release(0);
    await h.settle();
    h.release(1);
    await expect(h.promise).rejects.toThrow('item 1 failed');
    expect(h.log.filter((l) => l.startsWith('done'))).toEqual(['done 0=0']);
    expect(h.started.has(2)).toBe(false);
  });
});
