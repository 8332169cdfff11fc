import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { openDatabase, type Database } from '../../src/store/db.js';
import { StatementNames } from '../../src/store/pg-driver.js';
import { runTransaction } from '../../src/store/transaction.js';
import type { DB } from '../../src/store/schema.js';
import { PG_URL, dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';

describe('prepared statement names', () => {
  it('names a text at its second use, the same name every time after', () => {
    const names = new StatementNames();
    const text = 'select * from "users" where "id" = $1';
    assert.equal(names.nameOf(text, 1), undefined);
    const name = names.nameOf(text, 1);
    assert.ok(name);
    assert.equal(names.nameOf(text, 1), name);
    assert.notEqual(names.nameOf('select 2', 0) ?? names.nameOf('select 2', 0), name);
  });

  it('never names transaction control or DDL, nor a long list of values', () => {
    const names = new StatementNames();
    for (const text of ['begin', 'commit', 'create table t (a int)', 'set search_path = x']) {
      names.nameOf(text, 0);
      assert.equal(names.nameOf(text, 0), undefined, text);
    }
    const bulk = `insert into t values ${Array.from({ length: 70 }, (_, i) => `($${i + 1})`).join(', ')}`;
    names.nameOf(bulk, 70);
    assert.equal(names.nameOf(bulk, 70), undefined);
  });

  it('keeps at most 256 names, whatever the texts (variable IN lists)', () => {
    const names = new StatementNames();
    let named = 0;
    for (let n = 1; n <= 400; n++) {
      const text = `select * from t where id in (${Array.from({ length: n % 60 + 1 }, (_, i) => `$${i + 1}`).join(', ')}) and k = ${n}`;
      names.nameOf(text, n % 60 + 1);
      if (names.nameOf(text, n % 60 + 1)) named++;
    }
    assert.equal(named, 256);
  });

  it('a refused name is replaced by a new one; a pooler that lost it (26000) stops naming', () => {
    const names = new StatementNames();
    const text = 'select 1 where $1::int = 1';
    names.nameOf(text, 1);
    const first = names.nameOf(text, 1)!;
    names.refused(text, Object.assign(new Error('cached plan must not change result type'), { code: '0A000' }));
    const second = names.nameOf(text, 1);
    assert.ok(second && second !== first);
    names.refused(text, Object.assign(new Error('prepared statement "x" does not exist'), { code: '26000' }));
    assert.equal(names.nameOf(text, 1), undefined);
  });
});

const skip = (await postgresAvailable()) ? false : 'PostgreSQL not reachable';

/** The driver against a real server: a schema change under named statements, a lost statement, a terminated backend, BEGIN sent with the first statement. */
describe('prepared statements on PostgreSQL', { skip }, () => {
  const url = freshDatabaseUrl('postgres');
  const schema = new URL(url).searchParams.get('schema')!;
  let database: Database;
  let db: Kysely<DB>;
  const table = () => db as unknown as Kysely<{ pgs_items: { id: string; label: string } }>;
  const read = () => table().selectFrom('pgs_items').selectAll().where('id', '=', 'a').executeTakeFirstOrThrow();
  /** Enough reads that every pooled connection has the statement prepared. */
  const readOnEveryConnection = () => Promise.all(Array.from({ length: 30 }, read));

  before(async () => {
    database = await openDatabase(`${url}&application_name=${schema}`);
    db = database.db;
    await sql`create table pgs_items (id text primary key, label text not null)`.execute(db);
    await sql`insert into pgs_items values ('a', 'first')`.execute(db);
  });
  after(async () => {
    await database?.close();
    await dropDatabase(url);
  });

  it('a column added by another process: `select *` reads the new shape, in and out of a transaction', async () => {
    await readOnEveryConnection();
    await readOnEveryConnection();
    const other = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await other.connect();
    try {
      await other.query(`alter table pgs_items add column extra text not null default 'x'`);
    } finally {
      await other.end();
    }
    const rows = await readOnEveryConnection();
    for (const row of rows) assert.equal((row as { extra?: string }).extra, 'x');
    const c2 = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await c2.connect();
    try {
      await c2.query('alter table pgs_items add column more int not null default 7');
    } finally {
      await c2.end();
    }
    // Inside a transaction the refused statement aborts it; the transaction runs once more from BEGIN.
    const inTx = await runTransaction(db, (trx) => ({ trx }), async ({ trx }) =>
      (trx as unknown as typeof db).selectFrom('pgs_items' as never).selectAll().where('id' as never, '=', 'a' as never).executeTakeFirstOrThrow());
    assert.equal((inTx as { more?: number }).more, 7);
  });

  it('backends terminated: the statements are prepared again on the new connections', async () => {
    await readOnEveryConnection();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const r = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [schema]);
      assert.ok((r.rowCount ?? 0) > 0);
    } finally {
      await admin.end();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    const rows = await readOnEveryConnection();
    assert.equal(rows.length, 30);
  });

  it('BEGIN goes out with the first statement: that statement is inside the transaction, and a failing one leaves the connection usable', async () => {
    await assert.rejects(runTransaction(db, (trx) => ({ trx }), async ({ trx }) => {
      await sql`insert into pgs_items (id, label) values ('tx', 'inside')`.execute(trx);
      throw new Error('roll back');
    }), /roll back/);
    assert.equal(await table().selectFrom('pgs_items').select('id').where('id', '=', 'tx').executeTakeFirst(), undefined);
    // The first statement fails (duplicate key): rolled back, and every pooled connection still answers.
    for (let i = 0; i < 12; i++) {
      await assert.rejects(runTransaction(db, (trx) => ({ trx }), async ({ trx }) => {
        await sql`insert into pgs_items (id, label) values ('a', 'again')`.execute(trx);
      }), /duplicate key/);
    }
    assert.equal((await readOnEveryConnection()).length, 30);
    // A transaction with no statement at all: BEGIN and COMMIT alone.
    assert.equal(await runTransaction(db, () => ({}), async () => 'empty'), 'empty');
    // Two transactions on one row: the first statement's lock (FOR UPDATE) holds until COMMIT.
    const order: string[] = [];
    const hold = (who: string, ms: number) => runTransaction(db, (trx) => ({ trx }), async ({ trx }) => {
      await sql`select id from pgs_items where id = 'a' for update`.execute(trx);
      order.push(`${who} locked`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      order.push(`${who} done`);
    });
    await Promise.all([hold('first', 150), new Promise((resolve) => setTimeout(resolve, 30)).then(() => hold('second', 0))]);
    assert.deepEqual(order, ['first locked', 'first done', 'second locked', 'second done']);
  });

  it('statements dropped on the server (DEALLOCATE ALL, as a pooler would lose them): queries still answer', async () => {
    await db.connection().execute(async (conn) => {
      const one = () => (conn as unknown as Kysely<{ pgs_items: { id: string; label: string } }>).selectFrom('pgs_items').select('label').where('id', '=', 'a').executeTakeFirstOrThrow();
      await one();
      await one();
      await sql`deallocate all`.execute(conn);
      assert.equal((await one()).label, 'first');
    });
    assert.equal((await read()).label, 'first');
  });
});
