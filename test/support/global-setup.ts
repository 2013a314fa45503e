// Tests need the machine's real PostgreSQL and Redis; say so plainly when either is missing.
import net from 'node:net';

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
}
