import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StorageUnavailableError } from '../../src/core/unavailable.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { PG_URL, dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';
import { TcpProxy } from '../helpers/proxy.js';

const skip = (await postgresAvailable()) ? false : 'PostgreSQL not reachable';

/** The store layer on PostgreSQL through a proxy: what is retried, what becomes StorageUnavailableError, and that nothing hangs. */
describe('PostgreSQL connection failures in the store layer', { skip, timeout: 60_000 }, () => {
  const direct = freshDatabaseUrl('postgres');
  let proxy: TcpProxy;
  let storage: SqlStorage;

  before(async () => {
    proxy = await TcpProxy.start(PG_URL);
    storage = await openStorage(proxy.via(direct));
  });
  after(async () => {
    await proxy.restore();
    await storage?.close();
    await proxy?.close();
    await dropDatabase(direct);
  });

  it('a read on pooled connections that died is retried on a fresh one', async () => {
    await Promise.all([1, 2, 3].map(() => storage.clients.get('nobody')));
    proxy.cut();
    assert.equal(await storage.clients.get('nobody'), undefined);
  });

  it('a transaction whose connection dies before COMMIT runs once more, from the start', async () => {
    let attempts = 0;
    await storage.transaction(async (tx) => {
      attempts++;
      await tx.clients.get('nobody');
      if (attempts === 1) proxy.cut();
      await tx.clients.get('nobody');
    });
    assert.equal(attempts, 2);
  });

  it('the database refusing connections: StorageUnavailableError at once, and the pool recovers', async () => {
    await proxy.refuse();
    const started = performance.now();
    await assert.rejects(storage.clients.get('nobody'), (e) => e instanceof StorageUnavailableError && e.store === 'database');
    await assert.rejects(storage.transaction((tx) => tx.clients.get('nobody')), StorageUnavailableError);
    assert.ok(performance.now() - started < 1000);
    assert.equal(await storage.ready(), false);
    await proxy.restore();
    assert.equal(await storage.clients.get('nobody'), undefined);
  });

  it('a database that accepts but never answers: readiness says so within 1.5 s, queries fail within the 3 s connect timeout', async () => {
    proxy.stall();
    try {
      let started = performance.now();
      assert.equal(await storage.ready(), false);
      const readyMs = performance.now() - started;
      assert.ok(readyMs < 2000, `ready() took ${readyMs} ms`);
      started = performance.now();
      await assert.rejects(storage.clients.get('nobody'), StorageUnavailableError);
      const queryMs = performance.now() - started;
      assert.ok(queryMs < 8000, `a query gave up after ${queryMs} ms`);
    } finally {
      await proxy.restore();
    }
    assert.equal(await storage.clients.get('nobody'), undefined);
  });
});
