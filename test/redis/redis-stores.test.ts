import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { postgresAvailable } from '../helpers/db.js';
import { signedIn } from '../helpers/people.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { loadConfig } from '../../src/config.js';
import { startGatehouse } from '../../src/server.js';

const skip = (await redisAvailable()) ? false : 'Redis not reachable';

// The Redis session and rate-limit stores run the store conformance suites
// (test/store/consents-sessions.test.ts, test/store/keys-rate-limits.test.ts).

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
    const onA = await signedIn(a, 'heidi');
    const { user } = onA;
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
