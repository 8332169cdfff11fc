/**
 * More sign-ins for one account at once than its failure limit: the ones
 * over it are refused while the others are checked, and the refusal says so
 * honestly (a retry in a second), not "Wait 15 minutes" with Retry-After: 900,
 * since it clears as soon as they finish (src/core/throttle.ts, `inFlight`).
 * Five real failures still lock for the window.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const PASSWORD = 'correct horse battery staple';

type Outcome = { status: number; page: string; retryAfter: string | null };

/** A login form fetched (CSRF cookie and token), ready to post: a burst is then posted all at once. */
async function ready(username: string, password: string): Promise<() => Promise<Outcome>> {
  const agent = new Agent(server.url);
  const form = parseForm(await (await agent.get('/login')).text());
  return async () => {
    const res = await agent.post('/login', { ...form.fields, username, password });
    return { status: res.status, page: await res.text(), retryAfter: res.headers.get('retry-after') };
  };
}

const attempt = async (username: string, password: string): Promise<Outcome> => (await ready(username, password))();

let server: TestServer;

for (const { kind, skip } of await databaseKinds()) {
  describe(`sign-ins in flight (${kind})`, { skip }, () => {
    before(async () => {
      server = await startServer({ db: kind });
      await server.createUser('rosa');
      await server.createUser('sam');
    });
    after(() => server.close());

    it('refuses a burst beyond the limit with a small Retry-After and an honest message, then lets the next one in', async () => {
      const posts = await Promise.all(Array.from({ length: 30 }, () => ready('rosa', PASSWORD)));
      const runs = await Promise.all(posts.map((post) => post()));
      const refused = runs.filter((r) => r.status === 429);
      assert.ok(refused.length > 0, `a burst of 30 had some refused: ${runs.map((r) => r.status).join(',')}`);
      for (const r of runs) assert.ok(r.status === 302 || r.status === 303 || r.status === 429, `status ${r.status}`);
      for (const r of refused) {
        assert.ok(Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= 2, `Retry-After ${r.retryAfter}`);
        assert.match(r.page, /being checked right now. Try again in a moment/);
        assert.doesNotMatch(r.page, /15 minutes/);
      }
      // Once they finished, nothing is held: the right password gets in at once.
      const next = await attempt('rosa', PASSWORD);
      assert.ok(next.status === 302 || next.status === 303, `status ${next.status}`);
    });

    it('still locks for the window after five failures', async () => {
      for (let i = 0; i < 5; i++) assert.equal((await attempt('sam', `wrong ${i}`)).status, 401);
      const locked = await attempt('sam', PASSWORD);
      assert.equal(locked.status, 429);
      assert.match(locked.page, /Wait 15 minutes/);
      assert.ok(Number(locked.retryAfter) > 800, `Retry-After ${locked.retryAfter}`);
    });
  });
}
