import { Redis } from 'ioredis';
import type { RateCount, RateLimitStore, SessionStore, Storage, StorageHealth, Stores } from '../../core/ports.js';
import { StorageUnavailableError } from '../../core/unavailable.js';
import type { StoreLog } from '../startup.js';
import { RedisRateLimitStore } from './rate-limits.js';
import { RedisSessionStore } from './sessions.js';

export interface RedisOptions {
  /** Key prefix, so several deployments (or test runs) can share one Redis. */
  prefix?: string;
}

/**
 * A Redis connection that fails fast while Redis is away: no offline queue
 * (a command is refused at once while disconnected), a command timeout (2 s)
 * for a Redis that stops answering, and reconnection forever, at most a second
 * apart. Every error is handled (never an unhandled 'error' event); the log
 * gets one line when Redis goes away and one when it is back.
 */
export function connectRedis(url: string, log?: StoreLog): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 2000,
    connectTimeout: 2000,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  });
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    log?.warn({ err: { message: err.message, code: (err as { code?: string }).code } },
      'Redis unreachable: sign-in answers 503, rate limits count in the database, long polls poll the database; reconnecting');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log?.info({}, 'Redis reachable again');
  });
  return redis;
}

/** Resolves once `redis` is connected, or after `ms` (a Redis that is down at start only degrades the service). */
export function redisConnected(redis: Redis, ms = 2000): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    redis.on('ready', onReady);
  });
}

/** Redis answers PING within `ms`. */
export async function redisAnswers(redis: Redis, ms = 1000): Promise<boolean> {
  if (redis.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([redis.ping().then((r) => r === 'PONG'), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Sessions live only in Redis: while it is away they can be neither read nor written, and the pages answer 503. */
class SessionsOrUnavailable implements SessionStore {
  constructor(private readonly inner: SessionStore) {}

  private async guard<T>(p: () => Promise<T>): Promise<T> {
    try {
      return await p();
    } catch (e) {
      throw new StorageUnavailableError('redis', false, { cause: e });
    }
  }

  create: SessionStore['create'] = (s) => this.guard(() => this.inner.create(s));
  get: SessionStore['get'] = (id, now) => this.guard(() => this.inner.get(id, now));
  delete: SessionStore['delete'] = (id) => this.guard(() => this.inner.delete(id));
  listForUser: SessionStore['listForUser'] = (u, now) => this.guard(() => this.inner.listForUser(u, now));
  deleteForUser: SessionStore['deleteForUser'] = (u) => this.guard(() => this.inner.deleteForUser(u));
  touch: SessionStore['touch'] = (id, use, notBefore) => this.guard(() => this.inner.touch(id, use, notBefore));
  markVerified: SessionStore['markVerified'] = (id, at) => this.guard(() => this.inner.markVerified(id, at));
}

/**
 * Rate limits keep counting while Redis is away, in the database's counters
 * (shared by every process, like Redis's): a brute-force limit must not lapse
 * during an outage, and the password grant needs no session. A window that
 * started in Redis starts afresh in the database, so an outage can grant at
 * most one extra window of attempts.
 */
class RateLimitsWithFallback implements RateLimitStore {
  constructor(private readonly redis: RateLimitStore, private readonly database: RateLimitStore, private readonly connected: () => boolean) {}

  /**
   * The database only while Redis is disconnected: a command that merely
   * timed out on a live connection may still have counted in Redis, and
   * counting again elsewhere would split one window in two.
   */
  private either<T>(inRedis: () => Promise<T>, inDatabase: () => Promise<T>): Promise<T> {
    if (!this.connected()) return inDatabase();
    return inRedis().catch((e: unknown) => {
      if (!this.connected()) return inDatabase();
      throw new StorageUnavailableError('redis', false, { cause: e });
    });
  }

  /**
   * Reads count nothing, so a read that failed on a connection not yet seen
   * as lost (the first seconds of an outage) can safely ask the database
   * instead of answering 503: a right client secret keeps working then too.
   */
  private read<T>(inRedis: () => Promise<T>, inDatabase: () => Promise<T>): Promise<T> {
    if (!this.connected()) return inDatabase();
    return inRedis().catch(() => inDatabase());
  }

  hit(key: string, windowMs: number, now: number): Promise<number> {
    return this.either(() => this.redis.hit(key, windowMs, now), () => this.database.hit(key, windowMs, now));
  }

  hitAll(keys: readonly string[], windowMs: number, now: number): Promise<RateCount[]> {
    return this.either(() => this.redis.hitAll(keys, windowMs, now), () => this.database.hitAll(keys, windowMs, now));
  }

  peekAll(keys: readonly string[], now: number): Promise<RateCount[]> {
    return this.read(() => this.redis.peekAll(keys, now), () => this.database.peekAll(keys, now));
  }

  peek(key: string, now: number): Promise<number> {
    return this.read(() => this.redis.peek(key, now), () => this.database.peek(key, now));
  }

  unhit(key: string, now: number): Promise<void> {
    return this.either(() => this.redis.unhit(key, now), () => this.database.unhit(key, now));
  }

  async reset(key: string): Promise<void> {
    // Both: a counter may have been raised in either.
    await Promise.all([this.redis.reset(key).catch(() => undefined), this.database.reset(key)]);
  }
}

/**
 * Moves the shared, short-lived state (sessions, rate limits) to Redis and
 * leaves everything durable in the SQL store. Inside a SQL transaction the
 * Redis stores are used as they are: they are never part of one.
 */
export function withRedis(storage: Storage, redis: Redis, opts: RedisOptions = {}): Storage {
  const prefix = opts.prefix ?? 'gh:';
  const redisLimits = new RedisRateLimitStore(redis, prefix);
  const connected = () => redis.status === 'ready';
  const sessions = new SessionsOrUnavailable(new RedisSessionStore(redis, prefix));
  const shared = (stores: Stores): Pick<Stores, 'sessions' | 'rateLimits'> => ({ sessions, rateLimits: new RateLimitsWithFallback(redisLimits, stores.rateLimits, connected) });
  return {
    ...storage,
    ...shared(storage),
    transaction: (fn) => storage.transaction((tx) => fn({ ...tx, ...shared(tx) })),
    async ready() {
      return (await redisAnswers(redis)) && (await storage.ready());
    },
    async health(): Promise<StorageHealth> {
      const [database, up] = await Promise.all([storage.health ? storage.health() : storage.ready().then((ok): StorageHealth => ({ database: ok ? 'ok' : 'down' })), redisAnswers(redis)]);
      return { ...database, redis: up ? 'ok' : 'down' };
    },
    async close() {
      redis.disconnect();
      await storage.close();
    },
  };
}
