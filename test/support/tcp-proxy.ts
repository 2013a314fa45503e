/**
 * A TCP proxy on loopback between the agent and a real server, so a test can take the server
 * "away" (refuse and drop connections) or cut a connection in the middle of a transfer, without
 * touching the real server other tests share.
 */
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones until `restore()`. */
  cut(): void;
  restore(): void;
  /** The first connection (open now or later) to carry this many more bytes from server to client is dropped mid-transfer. */
  dropAfter(bytes: number): void;
  /** How many connections were dropped mid-transfer by `dropAfter`. */
  readonly midTransferDrops: number;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let down = false;
  // Bytes still allowed from server to client before the armed drop fires (null: not armed).
  let budget: number | null = null;
  let midTransferDrops = 0;

  const server = net.createServer((client) => {
    if (down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    upstream.on('data', (chunk: Buffer) => {
      if (budget !== null) {
        budget -= chunk.length;
        if (budget < 0) {
          budget = null;
          midTransferDrops++;
          // Half the chunk goes through, so the client sees a truncated response, then the line dies.
          client.write(chunk.subarray(0, Math.floor(chunk.length / 2)));
          client.destroy();
          upstream.destroy();
          return;
        }
      }
      client.write(chunk);
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    const close = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', close);
    upstream.on('close', close);
    client.on('error', close);
    upstream.on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    cut() {
      down = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      down = false;
    },
    dropAfter(bytes) {
      budget = bytes;
    },
    get midTransferDrops() {
      return midTransferDrops;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
