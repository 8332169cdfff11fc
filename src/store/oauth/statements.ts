import { CompiledQuery, PostgresAdapter, type Kysely, type QueryResult } from 'kysely';
import type { DB } from '../schema.js';

/**
 * Hand-written statements of the token hot paths, prepared once per dialect
 * and process: building and compiling a kysely query per request cost more
 * than SQLite's answer to it (docs/benchmarks.md). The text is written with
 * `?` placeholders; PostgreSQL's `$n` form is derived once.
 */
export interface Statement {
  sqlite: CompiledQuery<unknown>;
  postgres: CompiledQuery<unknown>;
}

const numbered = (text: string): string => {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
};

/** One statement; `postgres` only where its text differs beyond placeholders. */
export function statement(sqlite: string, postgres: string = sqlite): Statement {
  return { sqlite: CompiledQuery.raw(sqlite), postgres: CompiledQuery.raw(numbered(postgres)) };
}

/** Whether `db` (the root or a transaction) speaks to PostgreSQL. */
export const isPostgres = (db: Kysely<DB>): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/** Runs a prepared statement with its parameters, on `db`'s connection (the caller's transaction when it is one). */
export function run<R>(db: Kysely<DB>, postgres: boolean, s: Statement, parameters: readonly unknown[]): Promise<QueryResult<R>> {
  const q = postgres ? s.postgres : s.sqlite;
  return db.executeQuery<R>({ ...(q as CompiledQuery<R>), parameters });
}

/** `(?, ?, …)` for `columns` values, `rows` times: the VALUES list of a multi-row INSERT. */
export function valuesList(columns: number, rows: number): string {
  const row = `(${new Array<string>(columns).fill('?').join(', ')})`;
  return new Array<string>(rows).fill(row).join(', ');
}
