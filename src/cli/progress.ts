/**
 * Progress of a batch command on stderr: `replay: 24/74 messages, 11.8/s, about 4 s left`. On a
 * terminal one line is redrawn in place (at most every 200 ms); otherwise a line every 2 s and at the
 * end, so a log file is not flooded. The clock is injected for tests.
 */

export interface ProgressOptions {
  label: string;
  unit: string;
  isTerminal: boolean;
  write: (text: string) => void;
  now?: () => number;
}

/** The line for `done` of `total` after `elapsedMs`: count, rate and the time left at that rate. */
export function progressLine(label: string, unit: string, done: number, total: number, elapsedMs: number): string {
  const seconds = elapsedMs / 1000;
  const rate = seconds > 0 ? done / seconds : 0;
  const parts = [`${label}: ${done}/${total} ${unit}`];
  if (done > 0 && seconds >= 0.5) parts.push(`${rate >= 10 ? rate.toFixed(0) : rate.toFixed(1)}/s`);
  if (done === total) parts.push(`done in ${formatSeconds(seconds)}`);
  else if (done > 0 && rate > 0 && seconds >= 0.5) parts.push(`about ${formatSeconds((total - done) / rate)} left`);
  return parts.join(', ');
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.max(0, Math.round(seconds))} s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60 ? `${minutes} min ${Math.round(seconds % 60)} s` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A callback for `(done, total)` reports that draws the progress as the terminal (or a log) wants it. */
export function progressReporter(options: ProgressOptions): (done: number, total: number) => void {
  const now = options.now ?? Date.now;
  const started = now();
  const interval = options.isTerminal ? 200 : 2000;
  let lastShown = -Infinity;
  return (done, total) => {
    const at = now();
    if (done !== total && at - lastShown < interval) return;
    lastShown = at;
    const line = progressLine(options.label, options.unit, done, total, at - started);
    if (options.isTerminal) options.write(`\r\u001b[2K${line}${done === total ? '\n' : ''}`);
    else options.write(`${line}\n`);
  };
}
