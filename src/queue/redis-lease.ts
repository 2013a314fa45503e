/**
 * A lease in Redis: one holder at a time, renewed while held, lost when the holder dies. Used so
 * only one poller serves a mailbox however many processes run.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

const RELEASE_IF_OWNER = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const RENEW_IF_OWNER = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

export interface Lease {
  readonly key: string;
  /** Renews the lease; false when it was lost (expired and taken, or Redis flushed). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

export async function tryAcquireLease(redis: Redis, key: string, ttlMs: number): Promise<Lease | null> {
  const token = randomBytes(12).toString('hex');
  const ok = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (ok !== 'OK') return null;
  return {
    key,
    renew: async () => (await redis.eval(RENEW_IF_OWNER, 1, key, token, String(ttlMs))) === 1,
    release: async () => {
      await redis.eval(RELEASE_IF_OWNER, 1, key, token);
    },
  };
}
