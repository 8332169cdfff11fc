import type { Kysely } from 'kysely';
import { GroupCommit } from '../../core/group-commit.js';
import type { DB } from '../schema.js';
import { run, statement, valuesList, type Statement } from './statements.js';

/** Rows per statement: 13 parameters each stays far below both databases' limits (SQLite 32,766, PostgreSQL 65,535). */
const MAX_ROWS = 256;

/**
 * Group commit of single-row inserts made outside a transaction (an opaque
 * access token per client-credentials request): the rows that arrive in one
 * turn of the event loop, and while a batch is being written, go into the
 * next multi-row INSERT, one statement and one commit (a WAL append on
 * SQLite, a WAL flush on PostgreSQL) for all; the queue (src/core/group-commit.ts)
 * settles each caller's promise once its own row has committed, and retries
 * a failed batch row by row, as with an insert of its own.
 */
export class InsertBatcher {
  private readonly statements = new Map<number, Statement>();
  /** PostgreSQL: one statement for any number of rows, the columns as arrays (unnest), so one text is prepared. */
  private readonly unnest?: Statement;
  private readonly queue: GroupCommit<readonly unknown[], undefined>;

  /** `types`: each column's PostgreSQL type (`text`, `bigint`). */
  constructor(
    private readonly db: Kysely<DB>,
    postgres: boolean,
    private readonly table: string,
    private readonly columns: readonly string[],
    types: readonly string[],
  ) {
    if (postgres) {
      this.unnest = statement(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${types.map((t) => `?::${t}[]`).join(', ')})`);
    }
    // SQLite has one connection; on PostgreSQL the commit's wait for the disk dominates, so a few batches overlap.
    this.queue = new GroupCommit((rows) => this.write(rows), { maxInFlight: postgres ? 4 : 1, maxGroup: MAX_ROWS });
  }

  async insert(row: readonly unknown[]): Promise<void> {
    await this.queue.submit(row);
  }

  private statementFor(rows: number): Statement {
    let s = this.statements.get(rows);
    if (!s) {
      s = statement(`INSERT INTO ${this.table} (${this.columns.join(', ')}) VALUES ${valuesList(this.columns.length, rows)}`);
      // SQLite: every size from 1 to MAX_ROWS at most, a bounded set of texts.
      this.statements.set(rows, s);
    }
    return s;
  }

  private async write(rows: (readonly unknown[])[]): Promise<undefined[]> {
    if (this.unnest) await run(this.db, true, this.unnest, this.columns.map((_, i) => rows.map((r) => r[i])));
    else await run(this.db, false, this.statementFor(rows.length), rows.flat());
    return new Array<undefined>(rows.length);
  }
}
