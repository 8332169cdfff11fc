import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import type { DB } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  close(): Promise<void>;
}

/** PostgreSQL returns bigint (int8) as a string; our times fit a JS number. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 && format !== 'binary') return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
};

/** Distinct SQL texts kept prepared; queries with variable-length IN lists would otherwise grow it without end. */
const STATEMENT_CACHE_MAX = 1000;

/**
 * kysely prepares every query again (~9 µs a query on SQLite, a third of a
 * simple lookup: docs/benchmarks.md). Statements are kept by SQL text
 * instead. Safe because kysely runs one query at a time on this connection and
 * binds parameters per call; SQLite re-prepares a statement itself after a
 * schema change.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const prepared = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let statement = prepared.get(text);
      if (!statement) {
        statement = sqlite.prepare(text);
        if (prepared.size < STATEMENT_CACHE_MAX) prepared.set(text, statement);
      }
      return statement;
    },
  };
}

/**
 * Opens `sqlite:PATH`, `sqlite::memory:` or `postgres://…`. A `schema` query
 * parameter on a PostgreSQL URL puts every table in that schema (created if
 * missing): tests use it so parallel runs never collide.
 */
export async function openDatabase(url: string): Promise<Database> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SQLite(path === ':memory:' ? ':memory:' : path);
    sqlite.pragma('journal_mode = WAL');
    // WAL + NORMAL: durable against process crashes; a power loss may drop the last commits.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const u = new URL(url);
    const schema = u.searchParams.get('schema');
    u.searchParams.delete('schema');
    if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name: ${schema}`);
    if (schema) {
      const admin = new pg.Client({ connectionString: u.toString() });
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      } catch (e) {
        // Two processes creating it at once: the loser hits the catalog's unique
        // index (23505) despite IF NOT EXISTS; the schema exists either way.
        if ((e as { code?: string }).code !== '23505') throw e;
      } finally {
        await admin.end();
      }
    }
    const pool = new pg.Pool({
      connectionString: u.toString(),
      max: 10,
      types: pgTypes,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return { db, dialect: 'postgres', close: () => db.destroy() };
  }
  throw new Error(`unsupported database URL (use sqlite:PATH or postgres://…): ${url.replace(/\/\/[^@]*@/, '//***@')}`);
}

export async function ping(db: Kysely<DB>): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}
