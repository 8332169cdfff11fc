import type { Kysely } from 'kysely';
import type { DB } from '../schema.js';
import { run, statement, valuesList, type Statement } from './statements.js';

/** Rows per statement: 13 parameters each stays far below both databases' limits (SQLite 32,766, PostgreSQL 65,535). */
const MAX_ROWS = 256;

interface Waiting {
  row: readonly unknown[];
  done(err?: unknown): void;
}

/**
 * Group commit of single-row inserts made outside a transaction (an opaque
 * access token per client-credentials request): the rows that arrive in one
 * turn of the event loop, and while a batch is being written, go into the
 * next multi-row INSERT, one statement and one commit (a WAL append on
 * SQLite, a WAL flush on PostgreSQL) for all. Each caller's promise settles
 * only once its own row has committed, so an answer that follows it is never
 * sent before the token it carries is stored. A batch that fails is retried
 * row by row, so each caller gets its own row's outcome, as with an insert of
 * its own.
 */
export class InsertBatcher {
  private queue: Waiting[] = [];
  private scheduled = false;
  private inFlight = 0;
  private readonly statements = new Map<number, Statement>();
  /** SQLite has one connection; on PostgreSQL the commit's wait for the disk dominates, so a few batches overlap. */
  private readonly maxInFlight: number;

  /** PostgreSQL: one statement for any number of rows, the columns as arrays (unnest), so one text is prepared. */
  private readonly unnest?: Statement;

  /** `types`: each column's PostgreSQL type (`text`, `bigint`). */
  constructor(
    private readonly db: Kysely<DB>,
    private readonly postgres: boolean,
    private readonly table: string,
    private readonly columns: readonly string[],
    types: readonly string[],
  ) {
    this.maxInFlight = postgres ? 4 : 1;
    if (postgres) {
      this.unnest = statement(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM unnest(${types.map((t) => `?::${t}[]`).join(', ')})`);
    }
  }

  insert(row: readonly unknown[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, done: (err) => (err === undefined ? resolve() : reject(err)) });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // After this turn of the event loop: the requests read in the same turn share one statement.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
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

  private async write(batch: Waiting[]): Promise<void> {
    if (this.unnest) await run(this.db, true, this.unnest, this.columns.map((_, i) => batch.map((w) => w.row[i])));
    else await run(this.db, false, this.statementFor(batch.length), batch.flatMap((w) => w.row));
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_ROWS);
    if (batch.length === 0) return;
    this.inFlight++;
    this.schedule();
    try {
      await this.write(batch);
      for (const w of batch) w.done();
    } catch (err) {
      if (batch.length === 1) batch[0]!.done(err ?? new Error('insert failed'));
      else {
        // One bad row (a duplicate key) must not fail the others: each alone, with its own outcome.
        await Promise.all(batch.map((w) => this.write([w]).then(() => w.done(), (e: unknown) => w.done(e ?? new Error('insert failed')))));
      }
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
