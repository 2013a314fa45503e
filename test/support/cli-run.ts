/**
 * The command line's logic in this process: `main(argv)` as a spawned `support-agent` would run
 * it (only the given environment, with PATH and HOME; stdout and stderr captured; the exit code
 * returned), without the seconds a child process spends loading the sources. Tests where the
 * process boundary is the point (exit status of the binary, no stack trace, not hanging) spawn
 * bin/support-agent.js instead. One command at a time per test file (it swaps process-wide state:
 * the environment and the two output streams, restored when the command ends).
 */
import os from 'node:os';
import { main } from '../../src/cli/main.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command still running: its output so far, a wait for a line on stderr, and its exit code. */
export interface RunningCli {
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match on stderr, rejects if the command ends first. */
  waitForStderr(pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<number>;
}

type Write = typeof process.stdout.write;

/**
 * A wait for a line on a command's stderr: resolves with the first match, rejects once the command
 * has ended without it. `listeners` are called on every new chunk of stderr and when it ends.
 */
export function stderrWaiter(
  stderr: () => string,
  listeners: Set<() => void>,
  ended: () => boolean,
): (pattern: RegExp) => Promise<RegExpExecArray> {
  return (pattern) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const match = pattern.exec(stderr());
        if (match) {
          listeners.delete(check);
          resolve(match);
        } else if (ended()) {
          listeners.delete(check);
          reject(new Error(`ended before printing ${pattern}:\n${stderr()}`));
        }
      };
      listeners.add(check);
      check();
    });
}

function capture(append: (text: string) => void): Write {
  return ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (callback) queueMicrotask(callback);
    return true;
  }) as Write;
}

export function startCliInProcess(args: string[], env: Record<string, string> = {}): RunningCli {
  const saved = { env: process.env, out: process.stdout.write, err: process.stderr.write, exitCode: process.exitCode };
  let stdout = '';
  let stderr = '';
  let done = false;
  const listeners = new Set<() => void>();
  const changed = () => {
    for (const listener of listeners) listener();
  };
  process.env = { PATH: saved.env['PATH'] ?? '', HOME: os.tmpdir(), ...env };
  process.stdout.write = capture((text) => (stdout += text));
  process.stderr.write = capture((text) => {
    stderr += text;
    changed();
  });
  const exited = main(args).finally(() => {
    process.env = saved.env;
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exitCode = saved.exitCode;
    done = true;
    changed();
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStderr: stderrWaiter(
      () => stderr,
      listeners,
      () => done,
    ),
  };
}

export async function runCliInProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const running = startCliInProcess(args, env);
  const code = await running.exited;
  return { code, stdout: running.stdout(), stderr: running.stderr() };
}
