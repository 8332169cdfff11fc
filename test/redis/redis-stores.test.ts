import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisRateLimitStore } from '../../src/store/redis/rate-limits.js';
import { RedisSessionStore } from '../../src/store/redis/sessions.js';
import { Agent } from '../helpers/agent.js';
import { postgresAvailable } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { loadConfig } from '../../src/config.js';
import { startGatehouse } from '../../src/server.js';

const skip = (await redisAvailable()) ? false : 'Redis not reachable';

describe('Redis session and rate-limit stores', { skip }, () => {
  let redis: Redis;
  const prefix = freshRedisPrefix();
  before(() => {
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    redis.disconnect();
    await dropRedisPrefix(prefix);
  });

  it('sessions: create, get, expire by time, delete, delete for a user', async () => {
    const store = new RedisSessionStore(redis, prefix);
    const now = Date.now();
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

  it('rate limits: concurrent hits count exactly, the window expires, reset clears', async () => {
    const store = new RedisRateLimitStore(redis, prefix);
    const counts = await Promise.all(Array.from({ length: 50 }, () => store.hit('k', 60_000, Date.now())));
    assert.deepEqual([...counts].sort((a, b) => a - b), Array.from({ length: 50 }, (_, i) => i + 1));
    assert.equal(await store.peek('k', Date.now()), 50);
    await store.reset('k');
    assert.equal(await store.peek('k', Date.now()), 0);
    await store.hit('short', 50, Date.now());
    await new Promise((r) => setTimeout(r, 120));
    assert.equal(await store.peek('short', Date.now()), 0);
  });
});

describe('two Gatehouse processes on one PostgreSQL and one Redis', { skip: skip || ((await postgresAvailable()) ? false : 'PostgreSQL not reachable') }, () => {
  let a: TestServer;
  let b: Awaited<ReturnType<typeof startGatehouse>>;
  const prefix = freshRedisPrefix();
  before(async () => {
    a = await startServer({ db: 'postgres', env: { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } });
    // The second node shares the first one's schema and Redis, and its issuer.
    b = await startGatehouse(loadConfig({
      GATEHOUSE_DATABASE_URL: a.databaseUrl, GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix,
      GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_AUTH_URL: a.url, GATEHOUSE_LOG_LEVEL: 'silent',
    }));
  });
  after(async () => {
    await b.close();
    await a.close();
    await dropRedisPrefix(prefix);
  });

  it('a sign-in on one node is honoured by the other; lockouts are shared too', async () => {
    const user = await a.createUser('heidi');
    const onA = new Agent(a.url);
    assert.equal((await onA.login(user.username, user.password)).status, 303);
    const onB = new Agent(addressOf(b));
    // Carry the session cookie over to the other node, as a load balancer would.
    const cookie = onA.cookie('gh_session')!;
    const home = await fetch(`${addressOf(b)}/`, { headers: { cookie: `gh_session=${cookie}` } });
    assert.match(await home.text(), /signed in as <strong>heidi<\/strong>/i);

    // Five failures spread over both nodes lock the account on both.
    for (let i = 0; i < 5; i++) {
      const agent = new Agent(i % 2 ? a.url : addressOf(b));
      assert.equal((await agent.login('heidi', 'wrong password')).status, 401);
    }
    const locked = await onB.login('heidi', user.password);
    assert.equal(locked.status, 429);
  });
});

/** The second node's own listening address (its issuer is the first node's URL). */
function addressOf(running: Awaited<ReturnType<typeof startGatehouse>>): string {
  return running.listening;
}
