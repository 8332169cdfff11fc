/**
 * Migrations apart from serve (issue 30 item 1): `gatehouse migrate` applies
 * and names them; with GATEHOUSE_MIGRATE=off `serve` (alone, or the workers
 * of GATEHOUSE_WORKERS) refuses to start while one is pending, naming it and
 * the command, and starts once they are applied. SQLite (a file: two
 * processes share it) and PostgreSQL (a fresh schema).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../../src/store/db.js';
import { migrateOneUp } from '../../src/store/migrations.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl, PG_URL, type DbKind } from '../helpers/db.js';
import { serveProcess } from '../helpers/processes.js';

const DIR = mkdtempSync(join(tmpdir(), 'gh-migrate-'));
after(() => rmSync(DIR, { recursive: true, force: true }));

function databaseUrl(kind: DbKind): string {
  return kind === 'sqlite' ? `sqlite:${join(DIR, `${randomBytes(4).toString('hex')}.db`)}` : freshDatabaseUrl('postgres');
}

interface ColumnRow { table: string; column: string; type: string; notnull: boolean | number; hasdefault: boolean | number }

/**
 * Every table's columns: type, NOT NULL, default (kysely's own tables left
 * out). On PostgreSQL only this test's schema is read: kysely's introspector
 * reads every schema, and fails when another test drops its schema meanwhile.
 */
async function columnsOf(db: Kysely<unknown>, kind: DbKind): Promise<ColumnRow[]> {
  const rows = kind === 'postgres'
    ? (await sql<ColumnRow>`select c.relname as "table", a.attname as "column", format_type(a.atttypid, a.atttypmod) as "type",
        a.attnotnull as "notnull", a.atthasdef as "hasdefault"
        from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_attribute a on a.attrelid = c.oid
        where n.nspname = current_schema() and c.relkind = 'r' and a.attnum > 0 and not a.attisdropped`.execute(db)).rows
    : (await sql<ColumnRow>`select m.name as "table", p.name as "column", p.type as "type", p."notnull" as "notnull", p.dflt_value is not null as "hasdefault"
        from sqlite_master m join pragma_table_info(m.name) p where m.type = 'table' and m.name not like 'sqlite_%'`.execute(db)).rows;
  return rows.filter((r) => !r.table.startsWith('kysely_'));
}

/** Each table, and each column as `type null|not null`. */
async function schemaOf(db: Kysely<unknown>, kind: DbKind): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const r of await columnsOf(db, kind)) {
    out.set(r.table, 'table');
    out.set(`${r.table}.${r.column}`, `${r.type}${r.notnull ? ' not null' : ' null'}`);
  }
  return out;
}

/** Forgets that `name` was applied, as if the database were one release behind this code. */
async function unrecord(url: string, name: string): Promise<void> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length));
    db.prepare('DELETE FROM kysely_migration WHERE name = ?').run(name);
    db.close();
    return;
  }
  const schema = new URL(url).searchParams.get('schema')!;
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(`DELETE FROM "${schema}".kysely_migration WHERE name = $1`, [name]);
  } finally {
    await c.end();
  }
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`gatehouse migrate and GATEHOUSE_MIGRATE (${kind})`, { skip }, () => {
    const urls: string[] = [];
    after(async () => {
      for (const u of urls) await dropDatabase(u);
    });
    // The key in the environment: without it a PostgreSQL deployment would make a key file in ./data.
    const key = randomBytes(32).toString('base64');
    const envFor = (url: string, more: Record<string, string> = {}) => ({
      GATEHOUSE_DATABASE_URL: url, GATEHOUSE_SECRET_KEY: key, GATEHOUSE_LOG_LEVEL: 'info', ...more,
    });

    it('migrate --json applies every migration once and names them; a second run applies none', async () => {
      const url = databaseUrl(kind);
      urls.push(url);
      const first = await runCli(['migrate', '--json'], envFor(url));
      assert.equal(first.code, 0, first.stderr);
      const { applied } = JSON.parse(first.stdout) as { applied: string[] };
      assert.ok(applied.length >= 20, first.stdout);
      assert.equal(applied[0], '0001_oauth');
      assert.deepEqual(applied, [...applied].sort(), 'in the order they ran');
      assert.equal(first.stdout.trim().split('\n').length, 1, 'one JSON object');
      const again = await runCli(['migrate', '--json'], envFor(url));
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(JSON.parse(again.stdout), { applied: [] });
      const text = await runCli(['migrate'], envFor(url));
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /up to date/);
    });

    it('GATEHOUSE_MIGRATE=off: serve refuses a database with pending migrations, naming them and `gatehouse migrate`; starts once migrated', async () => {
      const url = databaseUrl(kind);
      urls.push(url);
      const off = { GATEHOUSE_MIGRATE: 'off', GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0' };
      const fresh = await runCli(['serve'], envFor(url, off));
      assert.notEqual(fresh.code, 0);
      assert.match(fresh.stderr, /^gatehouse: \d+ database migration\(s\) pending: 0001_oauth, 0002_bot, .*run `gatehouse migrate`/m);
      assert.doesNotMatch(fresh.stderr, /\n\s+at /, 'a message, not a stack trace');
      assert.doesNotMatch(fresh.stdout, /Gatehouse ready/);

      const migrated = await runCli(['migrate', '--json'], envFor(url));
      assert.equal(migrated.code, 0, migrated.stderr);
      const { applied } = JSON.parse(migrated.stdout) as { applied: string[] };
      const node = await serveProcess(envFor(url, off));
      await node.stop();

      // One release behind: only the newest migration is missing, and only it is named.
      const newest = applied.at(-1)!;
      await unrecord(url, newest);
      const behind = await runCli(['serve'], envFor(url, off));
      assert.notEqual(behind.code, 0);
      assert.match(behind.stderr, new RegExp(`1 database migration\\(s\\) pending: ${newest}\\. `));
      assert.match(behind.stderr, /gatehouse migrate/);
    });

    it('every migration only adds (expand, then contract in a later release): no table or column is dropped, renamed or retyped, and none becomes NOT NULL', async () => {
      const url = databaseUrl(kind);
      urls.push(url);
      const database = await openDatabase(url);
      const db = database.db as unknown as Kysely<unknown>;
      try {
        let before = await schemaOf(db, kind);
        let steps = 0;
        for (let name = await migrateOneUp(db); name !== undefined; name = await migrateOneUp(db)) {
          steps++;
          const now = await schemaOf(db, kind);
          // A version one release older still reads and writes what it knew: each of its tables and columns stays, as it was.
          for (const [thing, shape] of before) assert.equal(now.get(thing), shape, `${name} changed ${thing} (was ${shape})`);
          // A column added NOT NULL needs a default, or the older version's inserts (which do not name it) fail.
          const columns = await columnsOf(db, kind);
          for (const c of columns) {
            const thing = `${c.table}.${c.column}`;
            if (!before.has(thing) && before.has(c.table) && c.notnull) {
              assert.ok(c.hasdefault, `${name} adds ${thing} NOT NULL without a default to a table an older version inserts into`);
            }
          }
          before = now;
        }
        assert.ok(steps >= 20, `walked ${steps} migrations`);
      } finally {
        await database.close();
      }
    });

    it('GATEHOUSE_MIGRATE=off with GATEHOUSE_WORKERS=2: the first worker refuses for all, the start fails with the message', async () => {
      const url = databaseUrl(kind);
      urls.push(url);
      const r = await runCli(['serve'], envFor(url, { GATEHOUSE_MIGRATE: 'off', GATEHOUSE_WORKERS: '2', GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0' }));
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /database migration\(s\) pending: 0001_oauth, .*run `gatehouse migrate`/);
      // auto (the default) with workers: the first worker migrates as before, and the deployment serves.
      const node = await serveProcess(envFor(url, { GATEHOUSE_WORKERS: '2' }));
      await node.stop();
      const later = await runCli(['migrate', '--json'], envFor(url));
      assert.deepEqual(JSON.parse(later.stdout), { applied: [] });
    });
  });
}
