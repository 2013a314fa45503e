/**
 * The agent as a real child process (`support-agent work|poll|start`), with its log captured, so
 * fault tests can kill it with real signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const BIN = path.resolve(import.meta.dirname, '../../bin/support-agent.js');

export interface AgentProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves when a log line matches, rejects when the process exits first or the time is up. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

export function startAgentProcess(command: string[], env: Record<string, string>): AgentProcess {
  return startProcess(process.execPath, [BIN, ...command], env);
}

/**
 * Any launcher of the agent (`npm start`, a PID-1 namespace), with the same log capture.
 * `detached` puts it in a process group of its own (its pid), so a test can list what is left in it.
 */
export function startProcess(
  file: string,
  args: string[],
  env: Record<string, string>,
  options: { detached?: boolean } = {},
): AgentProcess {
  const child = spawn(file, args, {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    output += chunk.toString('utf8');
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let running = true;
  void exited.then(() => {
    running = false;
    for (const listener of listeners) listener();
  });

  return {
    child,
    output: () => output,
    exited,
    waitForLog(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            cleanup();
            resolve(match[0]);
          } else if (!running) {
            cleanup();
            reject(new Error(`process exited before logging ${pattern}:\n${output.slice(-3000)}`));
          }
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`no log line matched ${pattern} within ${timeoutMs} ms:\n${output.slice(-3000)}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async kill(signal) {
      if (running) child.kill(signal);
      return exited;
    },
  };
}
