import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/store/db.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('SQLite: once the log grows, a worker thread checkpoints it; the request thread keeps only a far bound', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-ckpt-'));
  const { db, close } = await openDatabase(`sqlite:${join(dir, 'g.db')}`);
  try {
    const autocheckpoint = async () => Number(Object.values((await sql<Record<string, number>>`pragma wal_autocheckpoint`.execute(db)).rows[0]!)[0]);
    assert.equal(await autocheckpoint(), 1000);
    await sql`create table t (k integer primary key, v text)`.execute(db);
    const row = 'x'.repeat(4000);
    for (let k = 0; k < 600; k++) await sql`insert into t (k, v) values (${k}, ${row})`.execute(db);
    assert.ok(statSync(join(dir, 'g.db-wal')).size >= 1 << 20);
    let value = 1000;
    for (let i = 0; i < 40 && value === 1000; i++) {
      await sleep(100);
      value = await autocheckpoint();
    }
    assert.equal(value, 16_000, 'the worker took the checkpoints over');
    // Writes go on while it copies; every row is there.
    for (let k = 600; k < 700; k++) await sql`insert into t (k, v) values (${k}, ${row})`.execute(db);
    await sleep(150);
    const { rows } = await sql<{ n: number }>`select count(*) as n from t`.execute(db);
    assert.equal(Number(rows[0]!.n), 700);
  } finally {
    await close();
    rmSync(dir, { recursive: true, force: true });
  }
});
