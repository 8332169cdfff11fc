import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { RateLimitStore } from '../../../src/core/ports.js';
import { T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

export interface RateLimitOptions extends SuiteOptions {
  /**
   * Windows end at the `now` the caller passes (the SQL counters). Redis runs
   * windows on its own clock (PEXPIRE), so the tests that move `now` across a
   * window's end are for the stores that follow the caller's clock only.
   */
  callerClock: boolean;
}

/** RateLimitStore: fixed windows counted atomically, read without counting, taken back, reset. */
export function rateLimitsConformance(name: string, factory: StoreFactory<{ rateLimits: RateLimitStore }>, { skip, callerClock }: RateLimitOptions): void {
  describe(`storage conformance: rate limits (${name})`, { skip }, () => {
    let storage: { rateLimits: RateLimitStore };
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    // The adapter's own clock runs the window: these move `now` across its end.
    const clock = { skip: callerClock ? false : 'windows run on the store\'s own clock' };

    describe('RateLimitStore', () => {
      it('counts hits in a fixed window that later hits do not extend', clock, async () => {
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

      it('hitAll counts every key in one step and says when each window ends; peekAll reads without counting', clock, async () => {
        const [a, b] = [`k:${randomUUID()}`, `k:${randomUUID()}`];
        await storage.rateLimits.hit(b, 1000, T);
        assert.deepEqual(await storage.rateLimits.hitAll([a, b], 2000, T + 100), [{ count: 1, resetAt: T + 2100 }, { count: 2, resetAt: T + 1000 }]);
        assert.deepEqual(await storage.rateLimits.peekAll([b, a, `k:${randomUUID()}`], T + 100), [{ count: 2, resetAt: T + 1000 }, { count: 1, resetAt: T + 2100 }, { count: 0, resetAt: 0 }]);
        // b's window ended at T + 1000: it starts again; a's goes on.
        assert.deepEqual(await storage.rateLimits.hitAll([b, a], 2000, T + 1000), [{ count: 1, resetAt: T + 3000 }, { count: 2, resetAt: T + 2100 }]);
        assert.deepEqual(await storage.rateLimits.peekAll([a], T + 2100), [{ count: 0, resetAt: 0 }]);
      });

      it('unhit takes one back, never below zero, and never revives an ended window', clock, async () => {
        const key = `k:${randomUUID()}`;
        await storage.rateLimits.hitAll([key], 1000, T);
        await storage.rateLimits.hitAll([key], 1000, T);
        await storage.rateLimits.unhit(key, T);
        assert.equal(await storage.rateLimits.peek(key, T), 1);
        await storage.rateLimits.unhit(key, T);
        await storage.rateLimits.unhit(key, T);
        assert.equal(await storage.rateLimits.peek(key, T), 0);
        assert.equal(await storage.rateLimits.hit(key, 1000, T), 1);
        await storage.rateLimits.unhit(key, T + 1000);
        assert.equal(await storage.rateLimits.hit(key, 1000, T + 1000), 1);
        await storage.rateLimits.unhit(`k:${randomUUID()}`, T);
      });

      // On the wall clock, so they hold for every store whatever runs its windows.
      it('concurrent hits count exactly, the window expires, reset clears', async () => {
        const store = storage.rateLimits;
        const counts = await Promise.all(Array.from({ length: 50 }, () => store.hit('k', 60_000, Date.now())));
        assert.deepEqual([...counts].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
        assert.equal(await store.peek('k', Date.now()), 50);
        await store.reset('k');
        assert.equal(await store.peek('k', Date.now()), 0);
        await store.hit('short', 50, Date.now());
        await new Promise((r) => setTimeout(r, 120));
        assert.equal(await store.peek('short', Date.now()), 0);
      });

      it('hitAll counts keys in one step with their window ends, peekAll reads, unhit takes one back', async () => {
        const store = storage.rateLimits;
        const now = Date.now();
        const all = await Promise.all(Array.from({ length: 30 }, (_, i) => store.hitAll(i % 2 ? ['x', 'y'] : ['y', 'x'], 60_000, now)));
        assert.deepEqual(all.map((c, i) => c[i % 2 ? 0 : 1]!.count).sort((a, b) => a - b), Array.from({ length: 30 }, (_, i) => i + 1));
        const [x, y, none] = await store.peekAll(['x', 'y', 'none'], now);
        assert.equal(x!.count, 30);
        assert.equal(y!.count, 30);
        assert.ok(x!.resetAt > now + 59_000 && x!.resetAt <= now + 60_000);
        assert.deepEqual(none, { count: 0, resetAt: 0 });
        await store.unhit('x', now);
        assert.equal(await store.peek('x', now), 29);
        await store.unhit('none', now);
        assert.equal(await store.peek('none', now), 0);
      });
    });
  });
}

const N = 20;

/** Two handles on one counter store: two processes behind one address. */
export interface TwoCounters {
  one: { rateLimits: RateLimitStore };
  other: { rateLimits: RateLimitStore };
}

/**
 * Counting must be atomic in the store, not in the process: N hits started
 * together, on one handle or spread over two (two SQLite connections on one
 * file, two PostgreSQL pools, two Redis connections), count 1…N exactly.
 */
export function rateLimitRacesConformance(name: string, factory: StoreFactory<TwoCounters>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: rate limits under concurrency (${name})`, { skip }, () => {
    let one: { rateLimits: RateLimitStore };
    let other: { rateLimits: RateLimitStore };
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: { one, other }, close } = await factory());
    });
    after(() => close());

    /** N calls started together, spread round-robin over the given handles. */
    const race = <R>(stores: { rateLimits: RateLimitStore }[], call: (s: { rateLimits: RateLimitStore }, i: number) => Promise<R>) =>
      Promise.all(Array.from({ length: N }, (_, i) => call(stores[i % stores.length]!, i)));

    for (const [label, pick] of [['one storage', () => [one]], ['two storages', () => [one, other]]] as const) {
      it(`counts exactly ${N} concurrent rate-limit hits on one key (${label})`, async () => {
        const key = `race:${randomUUID()}`;
        const counts = await race(pick(), (s) => s.rateLimits.hit(key, 60_000, T));
        assert.deepEqual([...counts].sort((a, b) => a - b), Array.from({ length: N }, (_, i) => i + 1));
        assert.equal(await other.rateLimits.peek(key, T), N);
      });

      it(`counts exactly ${N} concurrent two-key hits, keys in either order, without deadlock (${label})`, async () => {
        const [a, b] = [`race:${randomUUID()}`, `race:${randomUUID()}`];
        const counts = await race(pick(), (s, i) => s.rateLimits.hitAll(i % 2 ? [a, b] : [b, a], 60_000, T));
        const of = (k: string) => counts.map((c, i) => c[(i % 2 ? [a, b] : [b, a]).indexOf(k)]!.count).sort((x, y) => x - y);
        assert.deepEqual(of(a), Array.from({ length: N }, (_, i) => i + 1));
        assert.deepEqual(of(b), Array.from({ length: N }, (_, i) => i + 1));
      });
    }
  });
}
