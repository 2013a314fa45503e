/**
 * What a test server has received so far, and a way to wait until enough has arrived. Shared by
 * the SMTP sink and the scripted LLM server; waiting is bounded, so a missing arrival fails the
 * test with what did arrive instead of hanging it.
 */
export class Arrivals<T> {
  /** Everything received, in order; callers may read it (and clear it) directly. */
  readonly items: T[] = [];
  private readonly waiters = new Set<{ count: number; resolve: (items: T[]) => void; reject: (error: Error) => void }>();
  private closed = false;

  /** `server` names the server in errors ("SMTP sink"); `noun` counts its items ("message(s)"). */
  constructor(
    private readonly server: string,
    private readonly noun: string,
  ) {}

  push(item: T): void {
    this.items.push(item);
    for (const waiter of this.waiters) {
      if (this.items.length >= waiter.count) {
        this.waiters.delete(waiter);
        waiter.resolve(this.items.slice());
      }
    }
  }

  waitFor(count: number, timeoutMs = 10_000): Promise<T[]> {
    if (this.items.length >= count) return Promise.resolve(this.items.slice());
    if (this.closed) return Promise.reject(new Error(`${this.server} is closed; received ${this.items.length} of ${count} ${this.noun}`));
    return new Promise<T[]>((resolve, reject) => {
      const waiter = {
        count,
        resolve: (received: T[]) => {
          clearTimeout(timer);
          resolve(received);
        },
        reject: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`${this.server}: expected ${count} ${this.noun} within ${timeoutMs} ms, received ${this.items.length}`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** Fails every waiter; later waits fail at once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const waiter of this.waiters) {
      waiter.reject(new Error(`${this.server} closed while waiting for ${waiter.count} ${this.noun}, received ${this.items.length}`));
    }
    this.waiters.clear();
  }
}
