/**
 * Operator commands beside the running agent on the embedded database. PGlite allows one process,
 * so `support-agent start` listens on a Unix socket in DATA_DIR (mode 0600: only the agent's own
 * user) and runs the operator commands (`profile`, `why`, `promote`, `import`, `link`, `facts set`,
 * `erase`, …) it receives on its own runtime, one at a time; a command that finds the database locked
 * by the agent sends itself there and prints what comes back. With PostgreSQL nothing of this is
 * needed: every process opens the database itself.
 *
 * The wire format is one line of JSON each way: `{ "argv": [...] }`, then `{ code, stdout, stderr }`.
 * Requests are bounded (size, argument count, commands waiting), and nothing a client sends can
 * throw into the agent.
 */
import { existsSync } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { describeError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import type { ServedResult } from './output.ts';

const SOCKET_NAME = 'operator.sock';
const MAX_REQUEST_BYTES = 64 * 1024;
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
const MAX_WAITING = 8;
/** A client that sends nothing for this long is dropped. */
const IDLE_MS = 10_000;
/** How long a client waits for its command (an erase or a promotion through the model can take a while). */
const CLIENT_TIMEOUT_MS = 10 * 60_000;

const requestSchema = z.object({ argv: z.array(z.string().max(10_000)).min(1).max(64) }).strict();
const responseSchema = z.object({ code: z.number().int(), stdout: z.string(), stderr: z.string() });

/** Commands that never go to the agent: they are the agent, or need no database of its. */
const NOT_SERVED = new Set(['start', 'poll', 'work', 'console', 'migrate', 'replay', 'auth']);

export const operatorSocketPath = (dataDir: string) => path.join(path.resolve(dataDir), SOCKET_NAME);

export function isServedCommand(argv: readonly string[]): boolean {
  const command = argv.find((a) => !a.startsWith('-'));
  return command !== undefined && !NOT_SERVED.has(command) && !argv.includes('--help') && !argv.includes('-h');
}

export interface OperatorServer {
  path: string;
  close(): Promise<void>;
}

/**
 * Listens on DATA_DIR/operator.sock. `run` executes one command (the CLI's `main` on the agent's
 * runtime); commands run one at a time, in arrival order.
 */
export async function serveOperatorCommands(options: {
  dataDir: string;
  run: (argv: string[]) => Promise<ServedResult>;
  logger: Logger;
}): Promise<OperatorServer> {
  const socketPath = operatorSocketPath(options.dataDir);
  // Only the agent holding the database lock gets here, so a socket file left behind is stale.
  await rm(socketPath, { force: true });
  let queue: Promise<unknown> = Promise.resolve();
  let waiting = 0;

  const respond = (socket: net.Socket, result: ServedResult) => {
    if (!socket.destroyed) socket.end(`${JSON.stringify(result)}\n`);
  };

  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    const chunks: Buffer[] = [];
    let size = 0;
    let handled = false;
    socket.on('data', (chunk: Buffer) => {
      if (handled) return;
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        handled = true;
        respond(socket, { code: 2, stdout: '', stderr: 'support-agent: the request is too large\n' });
        return;
      }
      chunks.push(chunk);
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\n');
      if (end < 0) return;
      handled = true;
      socket.setTimeout(0);
      let argv: string[];
      try {
        argv = requestSchema.parse(JSON.parse(text.slice(0, end))).argv;
      } catch {
        respond(socket, { code: 2, stdout: '', stderr: 'support-agent: not a request: send one line {"argv": [...]}\n' });
        return;
      }
      if (!isServedCommand(argv)) {
        respond(socket, { code: 2, stdout: '', stderr: `support-agent: the running agent does not serve "${argv[0]}"\n` });
        return;
      }
      if (waiting >= MAX_WAITING) {
        respond(socket, { code: 1, stdout: '', stderr: 'support-agent: the agent is busy with other commands; try again\n' });
        return;
      }
      waiting++;
      const job = queue.then(async () => {
        try {
          respond(socket, await options.run(argv));
        } catch (error) {
          respond(socket, { code: 1, stdout: '', stderr: `support-agent: ${describeError(error)}\n` });
        } finally {
          waiting--;
        }
      });
      queue = job.catch(() => {});
    });
  });
  server.on('error', (error) => options.logger.warn('operator socket failed', { error: describeError(error) }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The socket is bound inside listen(): created 0600 from the start, never open to others.
    const umask = process.umask(0o177);
    try {
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
  await chmod(socketPath, 0o600);
  return {
    path: socketPath,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await queue;
      await rm(socketPath, { force: true });
    },
  };
}

/** Whether a running agent serves operator commands for this DATA_DIR. */
export const agentServes = (dataDir: string) => existsSync(operatorSocketPath(dataDir));

/** Sends a command to the running agent and returns what it printed and its exit code. */
export function sendToAgent(dataDir: string, argv: string[]): Promise<ServedResult> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(operatorSocketPath(dataDir));
    const chunks: Buffer[] = [];
    let size = 0;
    socket.setTimeout(CLIENT_TIMEOUT_MS, () => socket.destroy(new Error('the running agent did not answer in time')));
    socket.on('connect', () => socket.write(`${JSON.stringify({ argv })}\n`));
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES + MAX_REQUEST_BYTES) socket.destroy(new Error('the running agent answered too much'));
      else chunks.push(chunk);
    });
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(responseSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      } catch {
        reject(new Error('the running agent gave no answer'));
      }
    });
  });
}

export const OPERATOR_RESPONSE_LIMIT = MAX_RESPONSE_BYTES;
