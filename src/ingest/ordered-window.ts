/**
 * The ingestion window: work on a sequence of items where some depend on earlier ones. Each item
 * is prepared ahead (parsing, off the main thread), then started only once every earlier item it
 * shares a key with has finished, with at most `maxSideBySide` running at once; results are
 * reported strictly in the sequence's order, each once it and everything before it are done. A
 * failure stops the run: everything reported before it is done, and the first failure is thrown.
 */
import { sharesKey } from '../mail/ingest-order.ts';

export interface OrderedWindow<I, P, R> {
  /** Starts preparing an item (awaited later, in order). */
  prepare(item: I, index: number): Promise<P>;
  /** The keys through which items can affect each other (see src/mail/ingest-order.ts). */
  keysOf(prepared: P): readonly string[];
  /** Does the item's work once nothing it depends on is still running. */
  run(item: I, prepared: P, index: number): Promise<R>;
  /** Called in order, once an item and every item before it are done. */
  onDone?: (result: R, index: number) => Promise<void> | void;
  maxSideBySide: number;
}

export async function runOrderedWindow<I, P, R>(items: readonly I[], window: OrderedWindow<I, P, R>): Promise<R[]> {
  const preparing: Array<Promise<P>> = [];
  const prepareUpTo = (end: number) => {
    for (let i = preparing.length; i < Math.min(end, items.length); i++) {
      const work = window.prepare(items[i]!, i);
      // Awaited below; this keeps a rejection from being reported as unhandled in the meantime.
      work.catch(() => undefined);
      preparing.push(work);
    }
  };
  const results: R[] = [];
  const done: boolean[] = [];
  /** Settles (never rejects) when the item is done or has failed. */
  const running = new Map<number, { keys: readonly string[]; settled: Promise<void> }>();
  /** The earliest item that failed; nothing from it on is reported. */
  const first: { failure: { index: number; error: unknown } | null } = { failure: null };
  let reported = 0;
  const reportInOrder = async () => {
    while (reported < items.length && done[reported] && (first.failure === null || reported < first.failure.index)) {
      await window.onDone?.(results[reported]!, reported);
      reported++;
    }
  };

  for (let i = 0; i < items.length && first.failure === null; i++) {
    prepareUpTo(i + 1 + window.maxSideBySide);
    const prepared = await preparing[i]!;
    const keys = window.keysOf(prepared);
    const own = new Set(keys);
    for (;;) {
      const blockers = [...running.values()].filter((r) => sharesKey(r.keys, own));
      if (blockers.length === 0 && running.size < window.maxSideBySide) break;
      await Promise.race((blockers.length > 0 ? blockers : [...running.values()]).map((r) => r.settled));
      if (first.failure !== null) break;
    }
    // Report what is done before starting more, so the caller's checkpoint keeps up.
    await reportInOrder();
    if (first.failure !== null) break;
    const index = i;
    const settled = window.run(items[index]!, prepared, index).then(
      (result) => {
        results[index] = result;
        done[index] = true;
      },
      (error: unknown) => {
        if (first.failure === null || index < first.failure.index) first.failure = { index, error };
      },
    );
    running.set(index, { keys, settled: settled.finally(() => running.delete(index)) });
  }
  await Promise.all([...running.values()].map((r) => r.settled));
  await reportInOrder();
  if (first.failure !== null) throw first.failure.error;
  return results;
}
