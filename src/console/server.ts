/**
 * Starts the review console on its own HTTP server (`support-agent console`, and part of
 * `start`). Binds to loopback unless CONSOLE_HOST says otherwise; port 0 picks a free port.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Runtime } from '../app/runtime.ts';
import { AppError } from '../errors.ts';
import { createConsoleApp } from './app.ts';

export interface RunningConsole {
  url: string;
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export async function startConsole(runtime: Runtime, options: { port: number; host?: string }): Promise<RunningConsole> {
  const password = runtime.config.console.password;
  if (!password) throw new AppError('CONFIG_INVALID', 'the console needs CONSOLE_PASSWORD');
  const host = options.host ?? runtime.config.console.host;
  const app = createConsoleApp(runtime, password);
  const server = createAdaptorServer({ fetch: app.fetch, hostname: host }) as Server;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${urlHost(host)}:${port}`;
  runtime.logger.info('console listening', { url });
  if (password.length < 12) runtime.logger.warn('CONSOLE_PASSWORD is shorter than 12 characters; choose a longer one');
  if (!isLoopback(host)) {
    runtime.logger.warn('the console is reachable from other machines over plain HTTP; put it behind a TLS proxy', { host });
  }

  return {
    url,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Browsers keep idle connections open; without this close() would wait for them.
        server.closeAllConnections();
      }),
  };
}
