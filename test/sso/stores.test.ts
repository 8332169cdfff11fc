import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { SignIn } from '../../src/core/oidc/ports.js';
import type { SessionStore } from '../../src/core/ports.js';
import { RedisSessionStore } from '../../src/store/redis/sessions.js';
import { databaseKinds } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { aFamily, aSession, DAY, freshStorage, MINUTE, T } from '../store/fixtures.js';

const aSignIn = (over: Partial<SignIn> = {}): SignIn => ({
  familyId: randomUUID(), sid: 'sid-1', clientId: 'client-a', userId: 'user-1', authTime: T, createdAt: T, endedAt: null, ...over,
});

/** What the account page and single logout need of any session store. */
async function sessionListing(store: SessionStore, now: number) {
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
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`single sign-on storage (${kind})`, { skip }, () => {
    let s: Awaited<ReturnType<typeof freshStorage>>;
    before(async () => {
      s = await freshStorage(kind);
    });
    after(() => s.close());

    it('sign-ins: by family, by live session, ended once however many sign-outs race', async () => {
      const { signIns } = s.storage;
      const one = aSignIn({ sid: 'sx', clientId: 'a' });
      const two = aSignIn({ sid: 'sx', clientId: 'b', createdAt: T + 1 });
      await signIns.record(one);
      await signIns.record(two);
      await signIns.record(aSignIn({ sid: 'other' }));
      assert.deepEqual(await signIns.byFamily(one.familyId), one);
      assert.equal(await signIns.byFamily('none'), undefined);
      assert.deepEqual((await signIns.forSession('sx')).map((x) => x.clientId), ['a', 'b']);

      const ended = await Promise.all([signIns.endSession('sx', T + 5), signIns.endSession('sx', T + 5), signIns.endSession('sx', T + 5)]);
      assert.equal(ended.flat().length, 2, 'each sign-in ended exactly once');
      assert.deepEqual(await signIns.forSession('sx'), []);
      // Kept for ID tokens issued on refresh (auth_time, sid) until purged by age, ended or not.
      assert.equal((await signIns.byFamily(one.familyId))?.endedAt, T + 5);
      assert.equal(await signIns.purge(T + 1), 2);
      assert.equal(await signIns.byFamily(one.familyId), undefined);
      assert.equal((await signIns.byFamily(two.familyId))?.clientId, 'b');
      assert.equal((await signIns.forSession('other')).length, 0);
    });

    it('sessions: sid and browser kept, listed per user newest first, expired ones left out', async () => {
      await sessionListing(s.storage.sessions, T);
      // A session written without the new fields (as before 0004_oidc) reads back without them.
      const plain = aSession();
      await s.storage.sessions.create(plain);
      assert.deepEqual(await s.storage.sessions.get(plain.idHash, T), plain);
    });

    it("token families: a user's unrevoked families with one client", async () => {
      const { tokens } = s.storage;
      const base = { userId: `u-${randomUUID()}`, clientId: 'app' };
      const live = aFamily(base);
      const revoked = aFamily({ ...base, revokedAt: T });
      for (const f of [live, revoked, aFamily({ ...base, clientId: 'other' }), aFamily({ clientId: 'app' })]) await tokens.createFamily(f);
      assert.deepEqual(await tokens.activeFamilies(base.userId, 'app'), [live.id]);
    });
  });
}

const redisSkip = (await redisAvailable()) ? false : 'Redis not reachable';

describe('single sign-on storage (Redis sessions)', { skip: redisSkip }, () => {
  let redis: Redis;
  const prefix = freshRedisPrefix();
  before(() => {
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    redis.disconnect();
    await dropRedisPrefix(prefix);
  });

  it('sessions: sid and browser kept, listed per user newest first, expired ones left out', async () => {
    await sessionListing(new RedisSessionStore(redis, prefix), Date.now());
  });
});
