import { lockAccount, unlockAccount } from '../core/account-lock.js';
import { invalidRequest, notFound } from '../core/errors.js';
import type { Storage } from '../core/ports.js';
import { systemClock } from '../core/ports.js';
import type { CliHelpers } from './event-webhooks.js';
import { parserOptions } from './commands.js';

/**
 * With GATEHOUSE_REDIS_URL set, sessions live in Redis: the lock ends them
 * there and the unlock makes sure none survived, as the server does.
 */
export async function withSessions<T>(storage: Storage, redisUrl: string | undefined, prefix: string, fn: (s: Storage) => Promise<T>): Promise<T> {
  if (!redisUrl) return fn(storage);
  const { connectRedis, redisConnected, withRedis } = await import('../store/redis/index.js');
  const redis = connectRedis(redisUrl);
  try {
    await redisConnected(redis);
    return await fn(withRedis(storage, redis, { prefix }));
  } finally {
    redis.disconnect();
  }
}

async function userOf(s: Storage, username: unknown) {
  if (typeof username !== 'string' || !username) throw invalidRequest('--username is required');
  const user = await s.users.findByUsername(username);
  if (!user) throw notFound(`there is no user ${username}`);
  return user;
}

/** `gatehouse user lock|unlock --username U` (src/core/account-lock.ts; the console's Lock and Unlock do the same). */
export function userLockCommands(h: CliHelpers): Record<string, (args: string[]) => Promise<void>> {
  return {
    'user lock': async (args) => {
      const { values } = h.parse(args, parserOptions('user lock'));
      const config = h.configFrom(values);
      const r = await h.withStorage(config, (sql) => withSessions(sql, config.redisUrl, config.redisPrefix, async (s) => {
        const user = await userOf(s, values.username);
        const now = systemClock.now();
        const locked = await s.transaction((tx) => lockAccount(tx, user.id, { by: 'cli' }, now));
        if (!locked) throw notFound(`there is no user ${String(values.username)}`);
        return locked;
      }));
      h.print(Boolean(values.json), { id: r.userId, username: r.username, locked: true, sessions_ended: r.sessionsEnded, grants_revoked: r.familiesRevoked },
        `locked ${r.username} (${r.userId}): ${r.sessionsEnded} session${r.sessionsEnded === 1 ? '' : 's'} ended, ${r.familiesRevoked} grant${r.familiesRevoked === 1 ? '' : 's'} revoked; it cannot sign in until \`gatehouse user unlock\``);
    },
    'user unlock': async (args) => {
      const { values } = h.parse(args, parserOptions('user unlock'));
      const config = h.configFrom(values);
      const r = await h.withStorage(config, (sql) => withSessions(sql, config.redisUrl, config.redisPrefix, async (s) => {
        const user = await userOf(s, values.username);
        const unlocked = await unlockAccount(s, user.id, { by: 'cli' }, systemClock.now());
        if (!unlocked) throw notFound(`there is no user ${String(values.username)}`);
        return unlocked;
      }));
      h.print(Boolean(values.json), { id: r.userId, username: r.username, locked: false, was_locked: r.wasLocked },
        r.wasLocked ? `unlocked ${r.username} (${r.userId}): it may sign in again` : `${r.username} (${r.userId}) was not locked`);
    },
  };
}
