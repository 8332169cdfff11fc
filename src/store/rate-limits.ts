import { sql, type Kysely } from 'kysely';
import type { RateLimitStore } from '../core/ports.js';
import type { DB } from './schema.js';

/**
 * Fixed-window counters in the database, so every process behind one address
 * shares them (Redis takes over when configured). One upsert per hit: the
 * database serialises concurrent hits on a key.
 */
export class SqlRateLimitStore implements RateLimitStore {
  constructor(private readonly db: Kysely<DB>) {}

  async hit(key: string, windowMs: number, now: number): Promise<number> {
    const expired = sql<boolean>`rate_limits.expires_at <= ${now}`;
    const r = await this.db.insertInto('rate_limits').values({ key, count: 1, expires_at: now + windowMs })
      .onConflict((oc) => oc.column('key').doUpdateSet({
        count: sql<number>`case when ${expired} then 1 else rate_limits.count + 1 end`,
        expires_at: sql<number>`case when ${expired} then ${now + windowMs} else rate_limits.expires_at end`,
      }))
      .returning('count').executeTakeFirstOrThrow();
    return r.count;
  }

  async peek(key: string, now: number): Promise<number> {
    const r = await this.db.selectFrom('rate_limits').select('count').where('key', '=', key).where('expires_at', '>', now).executeTakeFirst();
    return r?.count ?? 0;
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('key', '=', key).execute();
  }
}
