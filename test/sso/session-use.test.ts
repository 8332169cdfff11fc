import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SessionManager, TOUCH_INTERVAL_MS } from '../../src/core/sessions.js';
import { sqlAdapters } from '../store/adapters.js';
import { TestClock } from '../helpers/clock.js';

/**
 * SessionManager.resolve records a session's last use and address for the
 * account page without adding a write to every request: at most one a minute.
 */
describe('session use: last use and address written at most once a minute', () => {
  it('writes on the first use, not again within the minute, then again after it', async () => {
    const [sqlite] = await sqlAdapters();
    const { stores, close } = await sqlite!.open();
    try {
      const clock = new TestClock(Date.UTC(2026, 0, 1));
      let writes = 0;
      const store = stores.sessions;
      const counted = Object.assign(Object.create(store) as typeof store, {
        touch: async (...args: Parameters<typeof store.touch>) => {
          const wrote = await store.touch(...args);
          if (wrote) writes++;
          return wrote;
        },
      });
      const sessions = new SessionManager(counted, clock, 3_600_000);
      const { id, session } = await sessions.create('user-1', { userAgent: 'Firefox' });
      assert.equal(session.lastUsedAt, undefined);

      const first = await sessions.resolve(id, { ip: '203.0.113.5' });
      assert.deepEqual([first?.lastUsedAt, first?.ip, writes], [clock.now(), '203.0.113.5', 1]);
      for (let i = 0; i < 20; i++) {
        clock.advance(2_000);
        await sessions.resolve(id, { ip: '203.0.113.5' });
      }
      assert.equal(writes, 1, 'no write within the minute');
      // Without a use (sign-in looking up the previous session), nothing is written.
      clock.advance(TOUCH_INTERVAL_MS);
      await sessions.resolve(id);
      assert.equal(writes, 1);
      const later = await sessions.resolve(id, { ip: '198.51.100.7' });
      assert.deepEqual([later?.lastUsedAt, later?.ip, writes], [clock.now(), '198.51.100.7', 2]);
    } finally {
      await close();
    }
  });
});
