/**
 * Starts the review console on its own HTTP server (`support-agent console`, and part of
 * `start`). Binds to loopback unless CONSOLE_HOST says otherwise; port 0 picks a free port.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { createAdaptorServer } from '@hono/node-server';
import type { Runtime } from '../app/runtime.ts';
import { AppError } from '../errors.ts';
import { createConsoleApp, type ConsoleAppOptions } from './app.ts';
import { newToken } from './auth.ts';
import { ONE_TIME_LOGIN_PATH, OneTimeLogin } from './one-time-login.ts';
import { hostOfAddress, isLoopbackHostname, isWildcardHost } from '../net/host-names.ts';

export interface RunningConsole {
  url: string;
  /** The one-time login link, when the console started without CONSOLE_PASSWORD on loopback. */
  loginUrl: string | null;
  close(): Promise<void>;
}

function urlHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/** Every address of this machine, for a console listening on all of them (its host check answers to each). */
function machineAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
}

export interface StartConsoleOptions extends Pick<ConsoleAppOptions, 'throttle'> {
  port: number;
  host?: string;
  /** Without CONSOLE_PASSWORD on a loopback address: open with a one-time link instead of refusing. */
  allowOneTimeLogin?: boolean;
}

export async function startConsole(runtime: Runtime, options: StartConsoleOptions): Promise<RunningConsole> {
  const settings = runtime.config.console;
  const host = options.host ?? settings.host;
  const local = isLoopbackHostname(hostOfAddress(host));
  const oneTimeLogin = !settings.password && options.allowOneTimeLogin && local ? new OneTimeLogin() : null;
  // With the one-time link, the password form's password is random and never shown: nobody types it.
  const password = settings.password ?? (oneTimeLogin ? newToken() : undefined);
  if (!password) {
    throw new AppError(
      'CONFIG_INVALID',
      'the console needs CONSOLE_PASSWORD (on a loopback CONSOLE_HOST, `support-agent console` opens with a one-time link instead)',
    );
  }
  const app = createConsoleApp(runtime, password, {
    boundHost: host,
    interfaceAddresses: isWildcardHost(host) ? machineAddresses() : [],
    ...(options.throttle ? { throttle: options.throttle } : {}),
    ...(oneTimeLogin ? { oneTimeLogin } : {}),
  });
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
  runtime.logger.info('console listening', {
    url,
    ...(settings.publicUrl ? { publicUrl: settings.publicUrl } : {}),
    ...(settings.trustedProxies.length > 0 ? { trustedProxies: settings.trustedProxies } : {}),
  });
  if (settings.password && password.length < 12) runtime.logger.warn('CONSOLE_PASSWORD is shorter than 12 characters; choose a longer one');
  if (!isLoopbackHostname(hostOfAddress(host)) && !settings.publicUrl?.startsWith('https:')) {
    runtime.logger.warn(
      'the console is reachable from other machines over plain HTTP; put it behind a TLS proxy and set CONSOLE_PUBLIC_URL',
      { host },
    );
  }
  if (settings.trustedProxies.length > 0 && !settings.publicUrl && settings.allowedHosts.length === 0) {
    runtime.logger.warn(
      'CONSOLE_TRUSTED_PROXIES is set but neither CONSOLE_PUBLIC_URL nor CONSOLE_ALLOWED_HOSTS: requests the proxy forwards for its public host name will be refused',
    );
  }

  return {
    url,
    loginUrl: oneTimeLogin ? `${url}${ONE_TIME_LOGIN_PATH}/${oneTimeLogin.token}` : null,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Browsers keep idle connections open; without this close() would wait for them.
        server.closeAllConnections();
      }),
  };
}
