import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { openStorage, type SqlStorage } from '../../../src/store/index.js';
import { migrateToLatest } from '../../../src/store/migrations.js';
import { aClient } from '../fixtures.js';
import type { SuiteOptions } from './suite.js';

/** The migrations kysely recorded, with the time each ran: a re-run would add or rewrite rows. */
async function applied(s: SqlStorage): Promise<{ name: string; timestamp: string }[]> {
  const { rows } = await sql<{ name: string; timestamp: string }>`select name, timestamp from kysely_migration order by name`.execute(s.database.db);
  return rows;
}

/**
 * Migrations. The factory gives a fresh database URL rather than open
 * stores (`sharedDatabaseUrl` in ../fixtures.ts): the suite opens it several
 * times, as processes starting together would.
 */
export function migrationsConformance(name: string, factory: () => { url: string; cleanup(): Promise<void> }, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: migrations (${name})`, { skip }, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const c of cleanups) await c();
    });

    it('opening the same database again applies nothing new and keeps the data', async () => {
      const { url, cleanup } = factory();
      cleanups.push(cleanup);
      const client = aClient();
      const first = await openStorage(url);
      const before = await applied(first);
      assert.ok(before.length > 0);
      await first.clients.create(client);
      await first.close();

      const second = await openStorage(url);
      try {
        assert.deepEqual(await applied(second), before);
        assert.deepEqual(await second.clients.get(client.id), client);
        // Running the migrator by hand on a migrated database is a no-op too.
        await migrateToLatest(second.database.db as Kysely<unknown>);
        assert.deepEqual(await applied(second), before);
        assert.equal(await second.ready(), true);
      } finally {
        await second.close();
      }
    });

    it('two processes starting together on a fresh database migrate it once', async () => {
      const { url, cleanup } = factory();
      cleanups.push(cleanup);
      const opened = await Promise.allSettled([openStorage(url), openStorage(url)]);
      const [a, b] = opened.map((o) => (o.status === 'fulfilled' ? o.value : undefined));
      try {
        for (const o of opened) if (o.status === 'rejected') throw o.reason;
        assert.ok(a && b);
        const rows = await applied(a);
        assert.equal(new Set(rows.map((r) => r.name)).size, rows.length);
        assert.deepEqual(await applied(b), rows);
        const client = aClient();
        await a.clients.create(client);
        assert.deepEqual(await b.clients.get(client.id), client);
      } finally {
        await a?.close();
        await b?.close();
      }
    });
  });
}
