/**
 * The integration project's global setup: the machine's real PostgreSQL and Redis must be there
 * (say so plainly when either is missing), and the migrated databases the test files start from
 * are prepared once, before the workers start: the PostgreSQL template (postgres.ts) and the
 * embedded database's data directory (pglite.ts). The unit project has no global setup: it runs
 * with no service at all.
 */
import net from 'node:net';
import { migratedTemplate } from './postgres.ts';
import { migratedPgliteDump } from './pglite.ts';

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export default async function setup(): Promise<void> {
  const missing: string[] = [];
  if (!(await reachable('127.0.0.1', 5432))) missing.push('PostgreSQL on 127.0.0.1:5432');
  if (!(await reachable('127.0.0.1', 6379))) missing.push('Redis on 127.0.0.1:6379');
  if (missing.length > 0) {
    throw new Error(`Tests need ${missing.join(' and ')}; .ci/run shows how to start them.`);
  }
  await Promise.all([migratedTemplate(), migratedPgliteDump()]);
}
