import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Session } from '../../../src/core/model.js';
import type { SessionStore } from '../../../src/core/ports.js';
import { aSession as fixtureSession, DAY, MINUTE, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

export interface SessionOptions extends SuiteOptions {
  /**
   * The instant the sessions are written at. Redis expires a session by its
   * own clock (PX from the wall clock), so its run writes at `Date.now()`;
   * the SQL stores keep whatever they are given (default: the fixtures' T).
   */
  now?: number;
}

/** SessionStore: sessions read until they expire, deleted one by one or per person, listed for the account page, their last use recorded. */
export function sessionsConformance(name: string, factory: StoreFactory<{ sessions: SessionStore }>, { skip, now = T }: SessionOptions = {}): void {
  const aSession = (over: Partial<Session> = {}) => fixtureSession({ authTime: now, createdAt: now, expiresAt: now + DAY, ...over });

  describe(`storage conformance: sessions (${name})`, { skip }, () => {
    let storage: { sessions: SessionStore };
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    describe('SessionStore', () => {
      it('returns a session until it expires', async () => {
        const s = aSession();
        await storage.sessions.create(s);
        assert.deepEqual(await storage.sessions.get(s.idHash, now), s);
        assert.deepEqual(await storage.sessions.get(s.idHash, s.expiresAt - 1), s);
        assert.equal(await storage.sessions.get(s.idHash, s.expiresAt), undefined);
        assert.equal(await storage.sessions.get('no-such-session', now), undefined);
      });

      it('deletes one session, or every session of a user', async () => {
        const user = randomUUID();
        const [a, b, c] = [aSession({ userId: user }), aSession({ userId: user }), aSession({ userId: user })];
        const someoneElse = aSession();
        for (const s of [a, b, c, someoneElse]) await storage.sessions.create(s);
        await storage.sessions.delete(a.idHash);
        assert.equal(await storage.sessions.get(a.idHash, now), undefined);
        assert.deepEqual(await storage.sessions.get(b.idHash, now), b);
        assert.equal(await storage.sessions.deleteForUser(user), 2);
        assert.equal(await storage.sessions.get(c.idHash, now), undefined);
        assert.deepEqual(await storage.sessions.get(someoneElse.idHash, now), someoneElse);
        assert.equal(await storage.sessions.deleteForUser(user), 0);
        await storage.sessions.delete('no-such-session');
      });

      it('sessions: create, get, expire by time, delete, delete for a user', async () => {
        const store = storage.sessions;
        const s = (idHash: string, userId: string, expiresAt = now + 60_000) => ({ idHash, userId, authTime: now, createdAt: now, expiresAt });
        await store.create(s('a', 'u1'));
        await store.create(s('b', 'u1'));
        await store.create(s('c', 'u2'));
        assert.equal((await store.get('a', now))?.userId, 'u1');
        assert.equal(await store.get('a', now + 61_000), undefined, 'expired by the caller clock');
        await store.delete('a');
        assert.equal(await store.get('a', now), undefined);
        assert.equal(await store.deleteForUser('u1'), 1);
        assert.equal(await store.get('b', now), undefined);
        assert.equal((await store.get('c', now))?.userId, 'u2');
        assert.equal(await store.deleteForUser('nobody'), 0);
      });

      // What the account page and single logout need of any session store.
      it('sessions: sid and browser kept, listed per user newest first, expired ones left out', async () => {
        const store = storage.sessions;
        const user = `user-${randomUUID()}`;
        const older = aSession({ userId: user, createdAt: now - 2 * MINUTE, expiresAt: now + DAY, sid: 'older', userAgent: 'Firefox' });
        const newer = aSession({ userId: user, createdAt: now - MINUTE, expiresAt: now + DAY, sid: 'newer' });
        const expired = aSession({ userId: user, createdAt: now - 3 * MINUTE, expiresAt: now + 1, sid: 'gone' });
        for (const s of [older, newer, expired, aSession({ expiresAt: now + DAY })]) await store.create(s);
        const listed = await store.listForUser(user, now + 2);
        assert.deepEqual(listed.map((s) => s.sid), ['newer', 'older']);
        assert.equal(listed[1]!.userAgent, 'Firefox');
        assert.deepEqual(await store.listForUser('nobody', now), []);
        await store.delete(newer.idHash);
        assert.deepEqual((await store.listForUser(user, now + 2)).map((s) => s.sid), ['older']);
        // A session written without the new fields (as before 0004_oidc) reads back without them.
        const plain = aSession();
        await store.create(plain);
        assert.deepEqual(await store.get(plain.idHash, now), plain);
      });

      // Sudo mode (src/core/reauth.ts): the time of the last proof, kept with the session, only ever moved forward.
      it('markVerified: records a later proof, never an earlier one; false for a session that is gone', async () => {
        const store = storage.sessions;
        const s = aSession({ sid: `sid-${randomUUID()}` });
        await store.create(s);
        assert.equal((await store.get(s.idHash, now))?.verifiedAt, undefined, 'only the sign-in until a proof');
        assert.equal(await store.markVerified(s.idHash, now + 5 * MINUTE), true);
        assert.deepEqual(await store.get(s.idHash, now), { ...s, verifiedAt: now + 5 * MINUTE });
        assert.equal(await store.markVerified(s.idHash, now + MINUTE), true);
        assert.equal((await store.get(s.idHash, now))?.verifiedAt, now + 5 * MINUTE, 'an earlier proof does not move it back');
        // A use of the session keeps the proof.
        await store.touch(s.idHash, { at: now + 6 * MINUTE, ip: '203.0.113.9' }, now + 5 * MINUTE);
        assert.equal((await store.get(s.idHash, now))?.verifiedAt, now + 5 * MINUTE);
        await store.delete(s.idHash);
        assert.equal(await store.markVerified(s.idHash, now + 10 * MINUTE), false);
        assert.equal(await store.get(s.idHash, now), undefined, 'not brought back');
      });

      // The account page's "last active" and address: one conditional write, at most once per interval.
      it('touch: records a use and its address unless one was recorded since notBefore; concurrent touches write once', async () => {
        const store = storage.sessions;
        const user = `user-${randomUUID()}`;
        const s = aSession({ userId: user, sid: `sid-${randomUUID()}`, userAgent: 'Firefox' });
        await store.create(s);
        assert.equal(await store.touch(s.idHash, { at: now + 10, ip: '203.0.113.5' }, now + 10 - MINUTE), true);
        assert.deepEqual(await store.get(s.idHash, now), { ...s, lastUsedAt: now + 10, ip: '203.0.113.5' });
        // Within the minute: nothing written.
        assert.equal(await store.touch(s.idHash, { at: now + 20_000, ip: '198.51.100.7' }, now + 20_000 - MINUTE), false);
        assert.equal((await store.get(s.idHash, now))?.lastUsedAt, now + 10);
        // A minute later, the new use and address.
        assert.equal(await store.touch(s.idHash, { at: now + 70_000, ip: '198.51.100.7' }, now + 70_000 - MINUTE), true);
        const [listed] = await store.listForUser(user, now);
        assert.deepEqual([listed?.lastUsedAt, listed?.ip, listed?.sid, listed?.userAgent, listed?.expiresAt], [now + 70_000, '198.51.100.7', s.sid, 'Firefox', s.expiresAt]);
        // Many requests of one minute at once: one write.
        const at = now + 200_000;
        const results = await Promise.all(Array.from({ length: 8 }, () => store.touch(s.idHash, { at, ip: null }, at - MINUTE)));
        assert.equal(results.filter(Boolean).length, 1);
        assert.deepEqual([(await store.get(s.idHash, now))?.lastUsedAt, (await store.get(s.idHash, now))?.ip ?? null], [at, null]);
        // A deleted session is not brought back by a late touch.
        await store.delete(s.idHash);
        assert.equal(await store.touch(s.idHash, { at: at + 2 * MINUTE, ip: '203.0.113.5' }, at + MINUTE), false);
        assert.equal(await store.get(s.idHash, now), undefined);
        assert.equal(await store.touch('no-such-session', { at, ip: null }, at - MINUTE), false);
      });
    });
  });
}
