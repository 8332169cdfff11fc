import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const REDIS_URL = process.env.GATEHOUSE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let up: Promise<boolean> | undefined;

/** Redis reachable? With CI=true a missing server is a failure, not a skip. */
export function redisAvailable(): Promise<boolean> {
  up ??= (async () => {
    const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 15_000 });
    try {
      await r.connect();
      await r.ping();
      return true;
    } catch (e) {
      if (process.env.CI === 'true') throw new Error(`Redis is required in CI (${REDIS_URL}): ${(e as Error).message}`);
      return false;
    } finally {
      r.disconnect();
    }
  })();
  return up;
}

/** A key prefix of its own for one test, and a cleanup that deletes its keys. */
export function freshRedisPrefix(): string {
  return `gh_t_${randomBytes(6).toString('hex')}:`;
}

export async function dropRedisPrefix(prefix: string): Promise<void> {
  const r = new Redis(REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length) await r.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
