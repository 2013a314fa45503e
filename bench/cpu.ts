/**
 * Where the time went, for the notes on a figure: how much CPU this process used (in cores) and
 * how busy the whole machine was (all processes, PostgreSQL and Redis included) over an interval.
 * Linux only for the machine share (/proc/stat); elsewhere that part is null.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';

function machineTicks(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return null;
  }
}

export interface CpuReport {
  /** CPU time of this process divided by wall time: 1.0 is one core fully used. */
  processCores: number;
  /** Share of all cores busy over the interval, 0..1; null where /proc/stat is missing. */
  machineBusy: number | null;
}

export function startCpuMeter(): { stop(): CpuReport } {
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  const ticksStart = machineTicks();
  return {
    stop: () => {
      const wallMs = performance.now() - wallStart;
      const cpu = process.cpuUsage(cpuStart);
      const ticksEnd = machineTicks();
      const machineBusy =
        ticksStart && ticksEnd && ticksEnd.total > ticksStart.total
          ? (ticksEnd.busy - ticksStart.busy) / (ticksEnd.total - ticksStart.total)
          : null;
      return { processCores: (cpu.user + cpu.system) / 1000 / wallMs, machineBusy };
    },
  };
}

export function describeCpu(report: CpuReport): string {
  const machine =
    report.machineBusy === null ? '' : `, the machine ${(report.machineBusy * 100).toFixed(0)}% busy (all cores, all processes)`;
  return `this process used ${report.processCores.toFixed(2)} cores${machine}`;
}

/**
 * Counts SQL statements sent over node-postgres (which the PostgreSQL driver adapter uses, BEGIN
 * and COMMIT included), to show how many round trips a unit of work costs, and the time they took
 * (from sending to the answer, once the statement has a connection: waiting for a pooled connection
 * is not in it; statements in flight side by side each count in full). Wraps
 * `Client.prototype.query` once per process; `Pool.query` goes through it too. `tap` hands every
 * statement's text (whitespace squeezed, cut at 160 characters) to a listener until the returned
 * function is called.
 */
export function countSqlStatements(): { read(): number; busyMs(): number; tap(listener: (text: string) => void): () => void } {
  type Counter = { n: number; ms: number; listeners: Set<(text: string) => void> };
  const state = globalThis as { __benchSqlCount?: Counter };
  if (!state.__benchSqlCount) {
    const counter: Counter = { n: 0, ms: 0, listeners: new Set() };
    state.__benchSqlCount = counter;
    const original = pg.Client.prototype.query as (...a: unknown[]) => unknown;
    (pg.Client.prototype as { query: unknown }).query = function (this: pg.Client, ...args: unknown[]) {
      counter.n++;
      if (counter.listeners.size > 0) {
        const first = args[0];
        const config = typeof first === 'object' && first !== null ? (first as { text?: unknown }) : null;
        const text = typeof first === 'string' ? first : String(config?.text ?? '');
        const squeezed = text.replace(/\s+/g, ' ').trim().slice(0, 160);
        for (const listener of counter.listeners) listener(squeezed);
      }
      const started = performance.now();
      let timed = false;
      const done = () => {
        if (timed) return;
        timed = true;
        counter.ms += performance.now() - started;
      };
      // Pool.query calls with a callback; the driver adapter inside a transaction awaits a promise.
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        args[args.length - 1] = function (this: unknown, ...results: unknown[]) {
          done();
          return (callback as (...r: unknown[]) => unknown).apply(this, results);
        };
      }
      const result = original.apply(this, args);
      if (result instanceof Promise) result.then(done, done);
      return result;
    };
  }
  const counter = state.__benchSqlCount;
  return {
    read: () => counter.n,
    busyMs: () => counter.ms,
    tap: (listener) => {
      counter.listeners.add(listener);
      return () => counter.listeners.delete(listener);
    },
  };
}
