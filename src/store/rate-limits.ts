import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { RateCount, RateLimitStore } from '../core/ports.js';
import type { DB } from './schema.js';

/**
 * Fixed-window counters in the database, so every process behind one address
 * shares them (Redis takes over when configured). One upsert per hit, however
 * many keys: the database serialises concurrent hits on a key, and RETURNING
 * hands each caller the count its own increment produced.
 */
export class SqlRateLimitStore implements RateLimitStore {
  constructor(private readonly db: Kysely<DB>) {}

  async hit(key: string, windowMs: number, now: number): Promise<number> {
    return (await this.hitAll([key], windowMs, now))[0]!.count;
  }

  async hitAll(keys: readonly string[], windowMs: number, now: number): Promise<RateCount[]> {
    // Sorted and distinct: one statement may update a row once (PostgreSQL), and
    // taking row locks in one order keeps two multi-key hits from deadlocking.
    const distinct = [...new Set(keys)].sort();
    const expired = sql<boolean>`rate_limits.expires_at <= ${now}`;
    const rows = await this.db.insertInto('rate_limits')
      .values(distinct.map((key) => ({ key, count: 1, expires_at: now + windowMs })))
      .onConflict((oc) => oc.column('key').doUpdateSet({
        count: sql<number>`case when ${expired} then 1 else rate_limits.count + 1 end`,
        expires_at: sql<number>`case when ${expired} then ${now + windowMs} else rate_limits.expires_at end`,
      }))
      .returning(['key', 'count', 'expires_at']).execute();
    return inOrder(keys, rows);
  }

  /** peekAll's statement per number of keys, compiled once: building a kysely query costs more than SQLite's answer. */
  private readonly peeks = new Map<number, CompiledQuery<Row>>();

  /** On the client-authentication hot path: one compiled read for every key. */
  async peekAll(keys: readonly string[], now: number): Promise<RateCount[]> {
    let q = this.peeks.get(keys.length);
    if (!q) {
      q = this.db.selectFrom('rate_limits').select(['key', 'count', 'expires_at']).where('key', 'in', keys).where('expires_at', '>', now).compile();
      this.peeks.set(keys.length, q);
    }
    const { rows } = await this.db.executeQuery<Row>({ ...q, parameters: [...keys, now] });
    return inOrder(keys, rows);
  }

  async peek(key: string, now: number): Promise<number> {
    return (await this.peekAll([key], now))[0]!.count;
  }

  async unhit(key: string, now: number): Promise<void> {
    await this.db.updateTable('rate_limits').set({ count: sql<number>`count - 1` })
      .where('key', '=', key).where('count', '>', 0).where('expires_at', '>', now).execute();
  }

  async reset(key: string): Promise<void> {
    await this.db.deleteFrom('rate_limits').where('key', '=', key).execute();
  }
}

type Row = { key: string; count: number; expires_at: number };

function inOrder(keys: readonly string[], rows: Row[]): RateCount[] {
  const byKey = new Map(rows.map((r) => [r.key, { count: Number(r.count), resetAt: Number(r.expires_at) }]));
  return keys.map((k) => byKey.get(k) ?? { count: 0, resetAt: 0 });
}
