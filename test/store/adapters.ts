import { Redis } from 'ioredis';
import type { RateLimitStore, SessionStore } from '../../src/core/ports.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { RedisRateLimitStore } from '../../src/store/redis/rate-limits.js';
import { RedisSessionStore } from '../../src/store/redis/sessions.js';
import { databaseKinds, type DbKind } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import type { StoreFactory } from './conformance/suite.js';
import { freshStorage, sharedDatabaseUrl } from './fixtures.js';

/** One adapter a suite runs against: its name in the test titles, its factory, and why it is skipped (if it is). */
export interface Adapter<S> {
  name: string;
  open: StoreFactory<S>;
  skip: string | false;
}

/** The SQL storage on SQLite (in memory) and on PostgreSQL (a fresh schema, dropped on close). */
export async function sqlAdapters(): Promise<Adapter<SqlStorage>[]> {
  return (await databaseKinds()).map(({ kind, skip }) => ({
    name: kind,
    skip,
    open: async () => {
      const { storage, close } = await freshStorage(kind);
      return { stores: storage, close };
    },
  }));
}

/**
 * Two SQL storages on one database (two SQLite connections on one file, two
 * PostgreSQL pools on one schema): two Gatehouse processes behind one address.
 */
export async function twoProcessSqlAdapters(): Promise<Adapter<{ kind: DbKind; one: SqlStorage; other: SqlStorage }>[]> {
  return (await databaseKinds()).map(({ kind, skip }) => ({
    name: kind,
    skip,
    open: async () => {
      const shared = sharedDatabaseUrl(kind);
      const one = await openStorage(shared.url);
      const other = await openStorage(shared.url);
      return {
        stores: { kind, one, other },
        async close() {
          await one.close();
          await other.close();
          await shared.cleanup();
        },
      };
    },
  }));
}

/** The Redis sessions and rate-limit stores under a fresh key prefix, deleted on close. */
export async function redisAdapter(): Promise<Adapter<{ sessions: SessionStore; rateLimits: RateLimitStore }>> {
  return {
    name: 'redis',
    skip: (await redisAvailable()) ? false : 'Redis not reachable',
    open: async () => {
      const redis = new Redis(REDIS_URL);
      const prefix = freshRedisPrefix();
      return {
        stores: { sessions: new RedisSessionStore(redis, prefix), rateLimits: new RedisRateLimitStore(redis, prefix) },
        async close() {
          redis.disconnect();
          await dropRedisPrefix(prefix);
        },
      };
    },
  };
}

/** Two Redis connections on one key prefix: two Gatehouse processes sharing one Redis. */
export async function twoProcessRedisAdapter(): Promise<Adapter<{ one: { rateLimits: RateLimitStore }; other: { rateLimits: RateLimitStore } }>> {
  return {
    name: 'redis',
    skip: (await redisAvailable()) ? false : 'Redis not reachable',
    open: async () => {
      const [first, second] = [new Redis(REDIS_URL), new Redis(REDIS_URL)];
      const prefix = freshRedisPrefix();
      return {
        stores: { one: { rateLimits: new RedisRateLimitStore(first, prefix) }, other: { rateLimits: new RedisRateLimitStore(second, prefix) } },
        async close() {
          first.disconnect();
          second.disconnect();
          await dropRedisPrefix(prefix);
        },
      };
    },
  };
}
