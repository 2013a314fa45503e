/**
 * Where a command's output goes: the process's stdout and stderr, or, for a command the running
 * agent serves to a local operator (src/cli/operator-socket.ts), buffers sent back to that operator.
 * The served command also runs on the agent's own runtime instead of opening the database again.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Runtime } from '../app/runtime.ts';

export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

interface Served {
  output: CliOutput;
  runtime: Runtime;
}

const served = new AsyncLocalStorage<Served>();
const processOutput: CliOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

export const output = (): CliOutput => served.getStore()?.output ?? processOutput;

/** The running agent's runtime when this command is served by it, else null. */
export const servedRuntime = (): Runtime | null => served.getStore()?.runtime ?? null;

export interface ServedResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command` with its output captured (each stream capped) and the agent's runtime at hand. */
export async function runServed(runtime: Runtime, command: () => Promise<number>, maxBytes: number): Promise<ServedResult> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let size = 0;
  const keep = (into: string[]) => (text: string) => {
    if (size >= maxBytes) return;
    const part = text.slice(0, maxBytes - size);
    size += part.length;
    into.push(part);
    if (size >= maxBytes) into.push('\n[output cut: too long]\n');
  };
  const code = await served.run({ runtime, output: { out: keep(stdout), err: keep(stderr) } }, command);
  return { code, stdout: stdout.join(''), stderr: stderr.join('') };
}
