import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';
import { run, statement, type Statement } from './statements.js';

/** Keys per statement. */
const MAX_KEYS = 500;

interface Waiting<R> {
  key: string;
  done(row: R | undefined, err?: unknown): void;
}

/**
 * PostgreSQL: lookups of one table by primary key asked for in the same turn
 * of the event loop (concurrent introspections) share one `= ANY($1)` query,
 * sent once that turn is over: after every caller sharing it arrived, so each
 * sees everything committed before its request, as a query of its own would.
 * Nothing is kept once the answer is handed out: a token revoked a moment
 * later is read as revoked by the next request. What this saves is the
 * round trip's work per query (protocol, parsing, the pool), which on this
 * path cost more than the lookup itself.
 */
export class LookupCoalescer<R> {
  private queue: Waiting<R>[] = [];
  private scheduled = false;
  private readonly query: Statement;

  constructor(
    private readonly db: Kysely<DB>,
    table: string,
    private readonly key: string & keyof R,
    columns = '*',
  ) {
    this.query = statement(`SELECT ${columns} FROM ${table} WHERE ${key} = ANY(?)`);
  }

  get(key: string): Promise<R | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ key, done: (row, err) => (err === undefined ? resolve(row) : reject(err)) });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          const all = this.queue;
          this.queue = [];
          for (let i = 0; i < all.length; i += MAX_KEYS) void this.flush(all.slice(i, i + MAX_KEYS));
        });
      }
    });
  }

  private async flush(batch: Waiting<R>[]): Promise<void> {
    try {
      const keys = [...new Set(batch.map((w) => w.key))];
      const { rows } = await run<R>(this.db, true, this.query, [keys]);
      const byKey = new Map(rows.map((r) => [r[this.key] as unknown as string, r]));
      for (const w of batch) w.done(byKey.get(w.key));
    } catch (err) {
      for (const w of batch) w.done(undefined, err ?? new Error('lookup failed'));
    }
  }
}
