import { Redis } from 'ioredis';

/**
 * A Redis connection for BullMQ and leases. `maxRetriesPerRequest: null` is what BullMQ workers
 * require: commands wait for a reconnect instead of failing while Redis restarts.
 */
export function createRedis(url: string, options: { forWorker?: boolean } = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: options.forWorker === false ? 3 : null,
    enableReadyCheck: true,
    lazyConnect: false,
  });
}
