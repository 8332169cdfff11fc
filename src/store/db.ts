import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import SQLite from 'better-sqlite3';
import type pg from 'pg';
import type { DB } from './schema.js';
import { guardedClient, guardedDialect } from './pg-resilience.js';
import { pgDialect } from './pg-driver.js';
import { offThreadCheckpoints } from './sqlite-checkpoint.js';
import { traceQuery, tracingOn } from '../infra/tracing.js';

/** A span per statement when traces are on (docs/operations.md, Traces). */
const queryTracing = () => (tracingOn() ? { log: traceQuery } : {});

export type Dialect = 'sqlite' | 'postgres';

export interface Database {
  db: Kysely<DB>;
  dialect: Dialect;
  close(): Promise<void>;
  /** Runs `fn` on a connection without the client-side reply timeout (PostgreSQL; elsewhere `fn(db)`). */
  unbounded?<T>(fn: (db: Kysely<DB>) => Promise<T>): Promise<T>;
}

/** PostgreSQL returns bigint (int8) as a string; our times fit a JS number. */
const pgTypesOf = (driver: typeof pg) => ({
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 && format !== 'binary') return (v: string) => Number(v);
    return driver.types.getTypeParser(oid, format);
  },
});

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
        // Kysely opens transactions with a deferred `begin`. With several processes on one file
        // (GATEHOUSE_WORKERS, or separate ones), one that read and then writes cannot wait for
        // the write lock: SQLite answers SQLITE_BUSY(_SNAPSHOT) at once, ignoring busy_timeout.
        // `begin immediate` takes the write lock first, waiting for it up to the busy timeout.
        statement = sqlite.prepare(text === 'begin' ? 'begin immediate' : text);
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
/**
 * Timeouts so that nothing waits on a database that is gone: connecting (and
 * waiting for a free pooled connection), a query whose reply never comes
 * (the client gives up and discards the connection), and a transaction left
 * open by a client that vanished (the server ends it and frees its locks).
 */
const PG_TIMEOUTS = {
  connectionTimeoutMillis: 3000,
  query_timeout: 30_000,
  idle_in_transaction_session_timeout: 30_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
} as const;

/** PostgreSQL connections one `serve` keeps at most (pooled), whatever its GATEHOUSE_WORKERS. */
export const PG_POOL_MAX = 10;

/**
 * A worker's share of PG_POOL_MAX (at least 2: one for a transaction, one
 * for a read beside it). Pools of the full size per worker would open
 * workers × 10 connections: past PostgreSQL's default max_connections (100)
 * from 10 cores on with GATEHOUSE_WORKERS=auto, where new connections fail
 * (53300) and requests answer 503, and on 2 cores twice the backends of one
 * process competing for the same cores.
 */
export const workerPoolMax = (workers: number): number => Math.max(2, Math.ceil(PG_POOL_MAX / workers));

export interface OpenOptions {
  /** Where connection errors go (they are expected during an outage and must never end the process). */
  onConnectionError?: (err: Error) => void;
  /** PostgreSQL: the pool's size (default PG_POOL_MAX; a worker of GATEHOUSE_WORKERS takes its share, workerPoolMax). */
  poolMax?: number;
}

export async function openDatabase(url: string, opts: OpenOptions = {}): Promise<Database> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const sqlite = new SQLite(path === ':memory:' ? ':memory:' : path);
    sqlite.pragma('journal_mode = WAL');
    // WAL + NORMAL: durable against process crashes; a power loss may drop the last commits.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('busy_timeout = 5000');
    // Deleted and overwritten content is zeroed, not left in free space (secrets shown once: src/store/bot/chats.ts).
    sqlite.pragma('secure_delete = ON');
    const db = new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }), ...queryTracing() });
    const checkpoints = path === ':memory:' ? undefined : offThreadCheckpoints(sqlite, path);
    return {
      db,
      dialect: 'sqlite',
      async close() {
        await checkpoints?.();
        await db.destroy();
      },
    };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const onConnectionError = opts.onConnectionError ?? (() => undefined);
    const u = new URL(url);
    const schema = u.searchParams.get('schema');
    u.searchParams.delete('schema');
    if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name: ${schema}`);
    // Loaded here: its stream module loads undici at import (~14 MB, ~100 ms), which a SQLite server never needs.
    const { default: driver } = await import('pg');
    const pgTypes = pgTypesOf(driver);
    const Client = guardedClient(driver, onConnectionError);
    if (schema) {
      const admin = new Client({ connectionString: u.toString(), ...PG_TIMEOUTS });
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
    const connect = (extra: pg.PoolConfig) => {
      const pool = new driver.Pool({
        connectionString: u.toString(),
        max: opts.poolMax ?? PG_POOL_MAX,
        types: pgTypes,
        ...PG_TIMEOUTS,
        Client,
        ...(schema ? { options: `-c search_path=${schema}` } : {}),
        ...extra,
      });
      // An idle pooled connection that breaks is removed by the pool, which then emits 'error'.
      pool.on('error', onConnectionError);
      return new Kysely<DB>({ dialect: guardedDialect(pgDialect(pool)), ...queryTracing() });
    };
    const db = connect({});
    return {
      db,
      dialect: 'postgres',
      close: () => db.destroy(),
      // A migration may rewrite or index a large table for longer than any request should wait.
      async unbounded(fn) {
        const own = connect({ max: 1, query_timeout: undefined });
        try {
          return await fn(own);
        } finally {
          await own.destroy();
        }
      },
    };
  }
  throw new Error(`unsupported database URL (use sqlite:PATH or postgres://…): ${url.replace(/\/\/[^@]*@/, '//***@')}`);
}

/** The database answers within `timeoutMs` (readiness must not hang on a database that is gone). */
export async function ping(db: Kysely<DB>, timeoutMs = 1500): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([sql`select 1`.execute(db).then(() => true), late]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
