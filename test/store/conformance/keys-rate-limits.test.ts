import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { SqlStorage } from '../../../src/store/index.js';
import { databaseKinds } from '../../helpers/db.js';
import { aKey, DAY, freshStorage, T } from '../fixtures.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`storage conformance: signing keys and rate limits (${kind})`, { skip }, () => {
    let storage: SqlStorage;
    let close: () => Promise<void>;
    before(async () => {
      ({ storage, close } = await freshStorage(kind));
    });
    after(() => close());

    describe('KeyStore', () => {
      // One sequence, since list() and deleteExpired() see the whole table.
      it('adds keys, retires all but the new one, and deletes them once expired', async () => {
        assert.deepEqual(await storage.keys.list(), []);
        const old = aKey({ createdAt: T - 3 * DAY, retiredAt: T - 2 * DAY, expiresAt: T - DAY });
        const previous = aKey({ createdAt: T - DAY });
        const current = aKey({ createdAt: T });
        for (const k of [current, old, previous]) await storage.keys.add(k);
        assert.deepEqual(await storage.keys.list(), [old, previous, current]);

        await storage.keys.retireOthers(current.kid, T + 1, T + DAY);
        const retired = { ...previous, retiredAt: T + 1, expiresAt: T + DAY };
        // A key retired earlier keeps its own schedule.
        assert.deepEqual(await storage.keys.list(), [old, retired, current]);

        assert.equal(await storage.keys.deleteExpired(T + 2), 1);
        assert.deepEqual(await storage.keys.list(), [retired, current]);
        assert.equal(await storage.keys.deleteExpired(T + DAY + 1), 1);
        assert.deepEqual(await storage.keys.list(), [current]);
        assert.equal(await storage.keys.deleteExpired(T + 365 * DAY), 0);
      });
    });

    describe('RateLimitStore', () => {
      it('counts hits in a fixed window that later hits do not extend', async () => {
        const key = `k:${randomUUID()}`;
        assert.equal(await storage.rateLimits.peek(key, T), 0);
        assert.equal(await storage.rateLimits.hit(key, 1000, T), 1);
        assert.equal(await storage.rateLimits.hit(key, 1000, T + 500), 2);
        assert.equal(await storage.rateLimits.hit(key, 1000, T + 999), 3);
        assert.equal(await storage.rateLimits.peek(key, T + 999), 3);
        // The window opened at T ends at T + 1000 whatever happened in it.
        assert.equal(await storage.rateLimits.peek(key, T + 1000), 0);
        assert.equal(await storage.rateLimits.hit(key, 1000, T + 1000), 1);
        assert.equal(await storage.rateLimits.hit(key, 1000, T + 1999), 2);
        assert.equal(await storage.rateLimits.hit(key, 1000, T + 2000), 1);
      });

      it('keeps keys apart', async () => {
        const [a, b] = [`k:${randomUUID()}`, `k:${randomUUID()}`];
        await storage.rateLimits.hit(a, 1000, T);
        await storage.rateLimits.hit(a, 1000, T);
        assert.equal(await storage.rateLimits.hit(b, 1000, T), 1);
        assert.equal(await storage.rateLimits.peek(a, T), 2);
      });

      it('reset forgets the count', async () => {
        const key = `k:${randomUUID()}`;
        await storage.rateLimits.hit(key, 1000, T);
        await storage.rateLimits.hit(key, 1000, T);
        await storage.rateLimits.reset(key);
        assert.equal(await storage.rateLimits.peek(key, T), 0);
        assert.equal(await storage.rateLimits.hit(key, 1000, T), 1);
        await storage.rateLimits.reset(`k:${randomUUID()}`);
      });
    });
  });
}
