import { Redis } from 'ioredis';
import type { Storage, Stores } from '../../core/ports.js';
import { RedisRateLimitStore } from './rate-limits.js';
import { RedisSessionStore } from './sessions.js';

export interface RedisOptions {
  /** Key prefix, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
}

export function connectRedis(url: string): Redis {
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
}

/**
 * Moves the shared, short-lived state (sessions, rate limits) to Redis and
 * leaves everything durable in the SQL store. Inside a SQL transaction the
 * Redis stores are used as they are: they are never part of one.
 */
export function withRedis(storage: Storage, redis: Redis, opts: RedisOptions = {}): Storage {
  const prefix = opts.prefix ?? 'gh:';
  const shared: Pick<Stores, 'sessions' | 'rateLimits'> = {
    sessions: new RedisSessionStore(redis, prefix),
    rateLimits: new RedisRateLimitStore(redis, prefix),
  };
  return {
    ...storage,
    ...shared,
    transaction: (fn) => storage.transaction((tx) => fn({ ...tx, ...shared })),
    async ready() {
      try {
        return (await redis.ping()) === 'PONG' && (await storage.ready());
      } catch {
        return false;
      }
    },
    async close() {
      redis.disconnect();
      await storage.close();
    },
  };
}
