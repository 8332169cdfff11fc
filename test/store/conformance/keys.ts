import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Stores } from '../../../src/core/ports.js';
import { aKey, DAY, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

/** KeyStore: signing keys added, retired and deleted once expired. */
export function keysConformance(name: string, factory: StoreFactory<Pick<Stores, 'keys'>>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: signing keys (${name})`, { skip }, () => {
    let storage: Pick<Stores, 'keys'>;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
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
  });
}
