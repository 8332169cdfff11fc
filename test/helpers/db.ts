import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type DbKind = 'sqlite' | 'postgres';
export const PG_URL = process.env.GATEHOUSE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

let pgUp: Promise<boolean> | undefined;

/**
 * PostgreSQL reachable? With CI=true a missing server is a failure, not a skip.
 * The connect timeout is generous: on a loaded machine a first connection can take seconds, and in CI a
 * slow answer must not read as a missing server.
 */
export function postgresAvailable(): Promise<boolean> {
  pgUp ??= (async () => {
    const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 15_000 });
    try {
      await c.connect();
      await c.end();
      return true;
    } catch (e) {
      if (process.env.CI === 'true') throw new Error(`PostgreSQL is required in CI (${PG_URL}): ${(e as Error).message}`);
      return false;
    }
  })();
  return pgUp;
}

/** A database of its own for one test: in-memory SQLite, or a fresh PostgreSQL schema. */
export function freshDatabaseUrl(kind: DbKind): string {
  if (kind === 'sqlite') return 'sqlite::memory:';
  const schema = `gh_t_${randomBytes(6).toString('hex')}`;
  return `${PG_URL}?schema=${schema}`;
}

/** Drops the schema a PostgreSQL test created. */
export async function dropDatabase(url: string): Promise<void> {
  const schema = url.startsWith('postgres') ? new URL(url).searchParams.get('schema') : null;
  if (!schema) return;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await c.end();
  }
}

/** The database kinds to run a suite on; PostgreSQL is skipped (outside CI) when not running. */
export async function databaseKinds(): Promise<{ kind: DbKind; skip: string | false }[]> {
  const up = await postgresAvailable();
  return [
    { kind: 'sqlite', skip: false },
    { kind: 'postgres', skip: up ? false : 'PostgreSQL not reachable' },
  ];
}
