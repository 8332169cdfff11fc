import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createEndpoint } from '../../src/core/notify/endpoints.js';
import { newEvent, newId } from '../../src/core/notify/events.js';
import { systemClock } from '../../src/core/ports.js';
import { createOutbound } from '../../src/infra/outbound/client.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { writeBatch } from '../../src/store/notify/fanout.js';
import { databaseKinds } from '../helpers/db.js';
import { sharedDatabaseUrl } from '../store/fixtures.js';

const checkUrl = createOutbound({ allowPrivate: false }).check;
const failed = (i: number) => newEvent('user.login.failed', { user_id: null, username: `u${i}`, ip: '192.0.2.1', reason: 'invalid_credentials' }, Date.now());

async function pendingBatches(s: SqlStorage): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`select count(*) as n from notify_event_batches`.execute(s.database.db);
  return Number(rows[0]!.n);
}

/**
 * Events appended outside a transaction are stored as one row per group
 * commit and fanned out later (src/store/notify/fanout.ts): nothing committed
 * is lost, nothing is queued twice, and readers see every committed event.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`outbox batch rows (${kind})`, { skip }, () => {
    let a: SqlStorage;
    let b: SqlStorage;
    let cleanup: () => Promise<void>;
    before(async () => {
      const shared = sharedDatabaseUrl(kind);
      cleanup = shared.cleanup;
      // Two storages on one database (a file for SQLite): two processes' worth of connections.
      a = await openStorage(shared.url);
      b = await openStorage(shared.url);
    });
    after(async () => {
      await a.close();
      await b.close();
      await cleanup();
    });

    it('group-commits concurrent appends into few rows; a listing fans them out and sees every one', async () => {
      const ep = await createEndpoint(a.events, systemClock, { url: 'https://hooks.example.test/h', events: ['user.login.failed'] }, { checkUrl });
      const events = Array.from({ length: 200 }, (_, i) => failed(i));
      await Promise.all(events.map((e) => a.events.append(e)));
      const rows = await pendingBatches(a);
      assert.ok(rows >= 1 && rows < 50, `200 concurrent appends in ${rows} rows`);
      // The other storage (another process) reads: it fans out what this one committed.
      const listed = new Set((await b.events.list({ type: 'user.login.failed', limit: 1000 })).map((e) => e.id));
      assert.deepEqual(events.filter((e) => !listed.has(e.id)).map((e) => e.id), [], 'every appended event listed');
      assert.equal(await pendingBatches(a), 0);
      const deliveries = await a.events.deliveries.list(ep.id, { limit: 1000 });
      assert.equal(deliveries.length, 200, 'one delivery each');
      await a.events.endpoints.delete(ep.id);
    });

    it('fans each batch out once when two processes claim at the same time', async () => {
      const ep = await createEndpoint(a.events, systemClock, { url: 'https://hooks.example.test/h', events: ['user.login.failed'] }, { checkUrl });
      const events = Array.from({ length: 120 }, (_, i) => failed(i));
      // Sequential appends: one row each, so the two claimers compete for many rows.
      for (const e of events) await a.events.append(e);
      const now = Date.now() + 1000;
      const [x, y] = await Promise.all([a.events.deliveries.claim(now, 500, 10_000, 'x'), b.events.deliveries.claim(now, 500, 10_000, 'y')]);
      const mine = (c: typeof x) => c.filter((d) => d.endpoint.id === ep.id).map((d) => d.event.id);
      const ids = [...mine(x), ...mine(y)];
      assert.equal(new Set(ids).size, ids.length, 'no delivery claimed twice');
      const all = await a.events.deliveries.list(ep.id, { limit: 1000 });
      assert.equal(all.length, 120, 'one delivery per event, none missing');
      assert.equal(new Set(all.map((d) => d.eventId)).size, 120);
      await a.events.endpoints.delete(ep.id);
    });

    it('PostgreSQL compresses batch rows with lz4 where the server has it (migration 0019)', { skip: kind !== 'postgres' && 'SQLite has no TOAST' }, async () => {
      const { rows } = await sql<{ lz4: boolean }>`select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`.execute(a.database.db);
      const column = await sql<{ c: string }>`select attcompression as c from pg_attribute where attrelid = 'notify_event_batches'::regclass and attname = 'events'`.execute(a.database.db);
      assert.equal(column.rows[0]!.c, rows[0]!.lz4 ? 'l' : '');
    });

    it('a batch row fanned out again (a crash before its delete, SQLite) yields each event and delivery once', { skip: kind !== 'sqlite' && 'PostgreSQL fans out and deletes in one transaction' }, async () => {
      const ep = await createEndpoint(a.events, systemClock, { url: 'https://hooks.example.test/h', events: ['user.login.failed'] }, { checkUrl });
      const events = [failed(1), failed(2)];
      await writeBatch(a.database.db, newId('bat_', Date.now()), events);
      assert.equal((await a.events.deliveries.list(ep.id, { limit: 10 })).length, 2);
      // The same events again, as a row whose delete never happened.
      await writeBatch(a.database.db, newId('bat_', Date.now()), events);
      const listed = (await a.events.list({ type: 'user.login.failed', limit: 1000 })).filter((e) => events.some((x) => x.id === e.id));
      assert.equal(listed.length, 2);
      assert.equal((await a.events.deliveries.list(ep.id, { limit: 10 })).length, 2);
      assert.equal(await pendingBatches(a), 0);
      await a.events.endpoints.delete(ep.id);
    });
  });
}
