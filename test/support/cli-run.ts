/**
 * The command line's logic in this process: `main(argv)` as a spawned `support-agent` would run
 * it (only the given environment, with PATH and HOME; stdout and stderr captured; the exit code
 * returned), without the seconds a child process spends loading the sources. Tests where the
 * process boundary is the point (exit status of the binary, no stack trace, not hanging) spawn
 * bin/support-agent.js instead. One run at a time per test file (it swaps process-wide state).
 */
import os from 'node:os';
import { main } from '../../src/cli/main.ts';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

type Write = typeof process.stdout.write;

function capture(append: (text: string) => void): Write {
  return ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    const callback = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
    if (callback) queueMicrotask(callback);
    return true;
  }) as Write;
}

export async function runCliInProcess(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const saved = { env: process.env, out: process.stdout.write, err: process.stderr.write, exitCode: process.exitCode };
  let stdout = '';
  let stderr = '';
  process.env = { PATH: saved.env['PATH'] ?? '', HOME: os.tmpdir(), ...env };
  process.stdout.write = capture((text) => (stdout += text));
  process.stderr.write = capture((text) => (stderr += text));
  try {
    const code = await main(args);
    return { code, stdout, stderr };
  } finally {
    process.env = saved.env;
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exitCode = saved.exitCode;
  }
}
