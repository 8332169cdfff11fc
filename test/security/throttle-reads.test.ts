/**
 * CredentialThrottle.check shares one read among checks of the same counters
 * made in one turn of the event loop (src/core/throttle.ts `read`), but a
 * check only ever joins a read that starts after it arrived, so a lock committed before a request is
 * always seen by it. The store is a real SQLite one whose reads the test
 * holds open.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RateCount, RateLimitStore } from '../../src/core/ports.js';
import { CredentialThrottle } from '../../src/core/throttle.js';
import type { SqlStorage } from '../../src/store/index.js';
import { TestClock } from '../helpers/clock.js';
import { freshStorage } from '../store/fixtures.js';

const policy = { kind: 't', perCredential: 5, perAddress: 20, windowMs: 60_000 };

describe('CredentialThrottle: shared lock-state reads', () => {
  let storage: SqlStorage;
  let close: () => Promise<void>;
  before(async () => {
    ({ storage, close } = await freshStorage('sqlite'));
  });
  after(() => close());

  /** peekAll reads the store when called, and answers only at `release()`. */
  function heldStore(inner: RateLimitStore) {
    const waiting: (() => void)[] = [];
    let calls = 0;
    const store: RateLimitStore = {
      ...inner,
      hit: (...a) => inner.hit(...a), hitAll: (...a) => inner.hitAll(...a), peek: (...a) => inner.peek(...a), unhit: (...a) => inner.unhit(...a), reset: (k) => inner.reset(k),
      peekAll(keys, now): Promise<RateCount[]> {
        calls++;
        const read = inner.peekAll(keys, now);
        return new Promise<void>((r) => waiting.push(r)).then(() => read);
      },
    };
    const release = async () => {
      const batch = waiting.splice(0);
      for (const r of batch) r();
      // Let the reads finish and queued reads start.
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    };
    return { store, release, calls: () => calls };
  }

  const turn = () => new Promise((r) => setImmediate(r));

  // Guards `read`: a check shares only a read that has not started yet; joining one already
  // started would miss a lock committed meanwhile.
  it('checks in one turn share a read started after them; a check never joins a started read', async () => {
    const held = heldStore(storage.rateLimits);
    const clock = new TestClock();
    const throttle = new CredentialThrottle(held.store, clock, policy);
    const counting = new CredentialThrottle(storage.rateLimits, clock, policy);

    const early = throttle.check('c1', '192.0.2.1');
    assert.equal(held.calls(), 0, 'the read starts once the turn is over');
    await turn();
    assert.equal(held.calls(), 1);
    // The credential gets locked while the early read is in flight…
    for (let i = 0; i < 5; i++) await counting.failed('c1', '192.0.2.9');
    // …so checks made now must see it, though a read of the same counters is still open.
    const late = [throttle.check('c1', '192.0.2.1'), throttle.check('c1', '192.0.2.1'), throttle.check('c1', '192.0.2.1')];
    await turn();
    assert.equal(held.calls(), 2, 'the three late checks share one read of their own');
    await held.release();
    assert.equal((await early).allowed, true, 'the early check read before the lock');
    for (const v of await Promise.all(late)) {
      assert.equal(v.allowed, false);
      assert.equal(v.lockedBy, 'credential');
    }
    // Other counters never share a read.
    const other = [throttle.check('c2', '192.0.2.1'), throttle.check('c1', '192.0.2.2')];
    await turn();
    assert.equal(held.calls(), 4);
    await held.release();
    assert.deepEqual((await Promise.all(other)).map((v) => v.allowed), [true, false]);
  });
});
