import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * Rows per DELETE statement when purging, bounded so no statement runs long:
 * on SQLite a statement holds the event loop, and with 1M rows stored a
 * 1,000-row batch took ~50 ms, 5,000 ~180 ms, one unbounded DELETE 6.6 s
 * (docs/benchmarks.md, cost vs data).
 */
export const PURGE_BATCH = 1000;

type Purgeable = 'access_tokens' | 'revoked_jtis' | 'refresh_tokens' | 'authorization_codes';

/**
 * Deletes the rows of `table` that expired before `expiredBefore` in bounded
 * batches (`batch` rows per statement) until none are left, pausing after
 * each batch as long as it took, so a large backlog never holds a long lock
 * or, on SQLite, blocks the event loop for long, and takes at most about half
 * of the process's time: requests keep being served while millions of rows go.
 */
export async function deleteExpiredBatched(db: Kysely<DB>, table: Purgeable, key: string, expiredBefore: number, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const started = Date.now();
    // Keys first (through the expiry index), then a delete by primary key: two short statements that
    // both databases run the same way (PostgreSQL has no DELETE … LIMIT, SQLite only when compiled in).
    const rows = await sql<{ k: string }>`SELECT ${sql.ref(key)} AS k FROM ${sql.table(table)} WHERE expires_at < ${expiredBefore} LIMIT ${batch}`.execute(db);
    if (rows.rows.length === 0) return total;
    const r = await sql`DELETE FROM ${sql.table(table)} WHERE ${sql.ref(key)} IN (${sql.join(rows.rows.map((x) => x.k))})`.execute(db);
    total += Number(r.numAffectedRows ?? 0n);
    if (rows.rows.length < batch) return total;
    await new Promise((resolve) => setTimeout(resolve, Math.min(Date.now() - started, 1000)));
  }
}
