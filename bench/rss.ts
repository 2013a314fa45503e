/**
 * Samples the process's resident set size on an interval, so a phase can report its peak and
 * the RSS at chosen moments. `process.memoryUsage.rss()` is the cheap call (no heap walk).
 */
export class RssSampler {
  private timer: NodeJS.Timeout | null = null;
  private peakBytes = 0;
  private count = 0;

  constructor(private readonly intervalMs = 20) {}

  start(): void {
    this.peakBytes = 0;
    this.count = 0;
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
  }

  /** Samples now (also counted towards the peak) and returns the RSS in bytes. */
  sample(): number {
    const rss = process.memoryUsage.rss();
    this.count++;
    if (rss > this.peakBytes) this.peakBytes = rss;
    return rss;
  }

  stop(): { peakBytes: number; samples: number } {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
    return { peakBytes: this.peakBytes, samples: this.count };
  }
}

/** Lets the heap settle (a full GC when `--expose-gc` is on) before a baseline is read. */
export async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await new Promise((resolve) => setTimeout(resolve, 200));
  gc?.();
}
