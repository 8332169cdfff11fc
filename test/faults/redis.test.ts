import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createClient, createUser } from '../../src/core/admin.js';
import { systemClock } from '../../src/core/ports.js';
import { argon2Hasher } from '../../src/infra/argon2.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { TcpProxy } from '../helpers/proxy.js';
import type { TestServer } from '../helpers/server.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson } from '../bot/support.js';
import { probe, secondsUntil, serve, sleep, type Node } from './support.js';

const skip = !(await postgresAvailable()) ? 'PostgreSQL not reachable' : !(await redisAvailable()) ? 'Redis not reachable' : false;

/** GET /login for its CSRF cookie and token, then POST the form; the outcome of the POST. */
async function signIn(base: string, username: string, password: string) {
  const page = await fetch(`${base}/login`, { headers: { accept: 'text/html' }, signal: AbortSignal.timeout(5000) });
  const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  return probe(`${base}/login`, {
    method: 'POST', redirect: 'manual',
    headers: { cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ username, password, csrf_token: csrf, return_to: '/' }),
  });
}

/**
 * Two processes (A: authorization server and Bot API, B: Bot API) share
 * PostgreSQL and reach Redis through a proxy the test cuts. Without Redis:
 * tokens are still issued, /readyz says degraded with 200, sign-in answers a
 * fast 503 page with Retry-After, a long poll on one node still wakes for an
 * update stored through the other and a newer getUpdates still ends an
 * older one with 409 (both through PostgreSQL); all of it is back within
 * seconds of Redis returning.
 */
describe('Redis outage', { skip, timeout: 120_000 }, () => {
  const direct = freshDatabaseUrl('postgres');
  const prefix = freshRedisPrefix();
  let storage: SqlStorage;
  let proxy: TcpProxy;
  let a: Node;
  let b: Node;
  let chat: ChatApi;
  let botToken = '';
  let basic = '';
  let passwordClient = '';
  const password = 'correct horse battery staple';

  const token = () => probe(`${a.authUrl}/oauth/token`, {
    method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials',
  });

  before(async () => {
    storage = await openStorage(direct);
    const cc = await createClient(storage, systemClock, { name: 'faults', redirectUris: [], grantTypes: ['client_credentials'] });
    basic = `Basic ${Buffer.from(`${cc.client.id}:${cc.secret}`).toString('base64')}`;
    const pw = await createClient(storage, systemClock, { name: 'password', redirectUris: [], grantTypes: ['password'] });
    passwordClient = `Basic ${Buffer.from(`${pw.client.id}:${pw.secret}`).toString('base64')}`;
    await createUser(storage, argon2Hasher(), systemClock, { username: 'kim', email: 'kim@example.test', password });
    proxy = await TcpProxy.start(REDIS_URL);
    const env = { GATEHOUSE_DATABASE_URL: direct, GATEHOUSE_REDIS_URL: proxy.via(REDIS_URL), GATEHOUSE_REDIS_PREFIX: prefix };
    a = await serve({ ...env, GATEHOUSE_ROLES: 'auth,bot' }).ready();
    b = await serve({ ...env, GATEHOUSE_ROLES: 'bot', GATEHOUSE_AUTH_URL: a.authUrl }).ready();
    const hasher = argon2Hasher();
    const asServer = {
      url: a.authUrl,
      createUser: async (username: string) => {
        await createUser(storage, hasher, systemClock, { username, email: `${username}@example.test`, password });
        return { id: username, username, password };
      },
      createClient: async (input: Parameters<TestServer['createClient']>[0]) => {
        const { client, secret } = await createClient(storage, systemClock, { name: 'Test app', redirectUris: [], ...input });
        return { id: client.id, secret };
      },
    } as unknown as TestServer;
    chat = new ChatApi(b.botUrl, await signedInPerson(asServer, 'hana'));
    botToken = await botViaBotFather(chat, 'Outage', 'outage_test_bot');
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
    await proxy?.close();
    await storage?.close();
    await dropDatabase(direct);
    await dropRedisPrefix(prefix);
  });

  it('serves tokens, degrades readiness, refuses sign-in with a fast 503, keeps rate limits, long polls and the 409 rule; back within seconds', async (t) => {
    assert.equal((await signIn(a.authUrl, 'hana', password)).status, 303);
    await proxy.refuse();
    const cutAt = performance.now();
    await sleep(300);

    const ready = await fetch(`${a.authUrl}/readyz`, { signal: AbortSignal.timeout(3000) });
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'degraded', database: 'ok', redis: 'down' });
    const issued = await token();
    assert.equal(issued.status, 200, 'token issuance does not need Redis');

    const login = await signIn(a.authUrl, 'hana', password);
    assert.equal(login.status, 503);
    assert.equal(login.retryAfter, '2');
    assert.ok(login.ms < 2000, `sign-in answered in ${login.ms} ms`);

    // Brute-force limits hold without Redis: five wrong passwords lock the account (database counters).
    const grant = (pass: string) => fetch(`${a.authUrl}/oauth/token`, {
      method: 'POST', headers: { authorization: passwordClient, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'kim', password: pass }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error_description?: string } }));
    for (let i = 0; i < 5; i++) assert.equal((await grant('wrong password')).status, 400);
    const locked = await grant(password);
    assert.equal(locked.status, 400);
    assert.match(locked.body.error_description ?? '', /too many failed attempts/);

    // A long poll on A wakes for a message written through B.
    const polling = botApi(a.botUrl, botToken, 'getUpdates', { timeout: 15 });
    await sleep(700);
    const sentAt = performance.now();
    await chat.send('outage_test_bot', 'hello without Redis');
    const woke = await polling;
    const wokeIn = performance.now() - sentAt;
    assert.equal(woke.status, 200);
    assert.equal((woke.body.result as unknown[]).length, 1);
    assert.ok(wokeIn < 3000, `woken after ${wokeIn} ms`);
    const offset = ((woke.body.result as { update_id: number }[])[0]!.update_id) + 1;

    // A newer getUpdates on B ends the older one on A with 409.
    const older = botApi(a.botUrl, botToken, 'getUpdates', { timeout: 15, offset });
    await sleep(700);
    const newerAt = performance.now();
    const newer = botApi(b.botUrl, botToken, 'getUpdates', { timeout: 1, offset });
    const ended = await older;
    const endedIn = performance.now() - newerAt;
    await newer;
    assert.equal(ended.status, 409, JSON.stringify(ended.body));
    assert.ok(endedIn < 3000, `older poll ended after ${endedIn} ms`);

    await proxy.restore();
    const restoredAt = performance.now();
    const signInBack = await secondsUntil(() => signIn(a.authUrl, 'hana', password), 303);
    const readyBack = await secondsUntil(async () => {
      const r = await fetch(`${a.authUrl}/readyz`);
      return { status: ((await r.json()) as { status: string }).status === 'ready' ? 200 : 0, ms: 0, retryAfter: null };
    }, 200);
    t.diagnostic(`Redis cut ${((restoredAt - cutAt) / 1000).toFixed(1)} s: token 200, /readyz 200 degraded, sign-in 503 in ${Math.round(login.ms)} ms, ` +
      `cross-node wake-up ${Math.round(wokeIn)} ms, 409 after ${Math.round(endedIn)} ms; after restore: sign-in in ${signInBack.toFixed(2)} s, ready in ${readyBack.toFixed(2)} s`);
    assert.ok(signInBack < 5, `sign-in back after ${signInBack} s`);
    for (const n of [a, b]) {
      assert.ok(n.alive, `a process exited:\n${n.dump()}`);
      assert.ok(!n.lines.some((l) => /Unhandled error event/.test(String(l.msg))), 'no unhandled ioredis error');
    }
  });

  it('a start while Redis is down: the process serves at once, degraded, and is ready when Redis returns', async (t) => {
    await proxy.refuse();
    const startedAt = performance.now();
    const c = serve({ GATEHOUSE_DATABASE_URL: direct, GATEHOUSE_REDIS_URL: proxy.via(REDIS_URL), GATEHOUSE_REDIS_PREFIX: prefix, GATEHOUSE_ROLES: 'auth,bot' });
    try {
      await c.ready(20_000);
      const readyIn = (performance.now() - startedAt) / 1000;
      const ready = await fetch(`${c.authUrl}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(((await ready.json()) as { status: string }).status, 'degraded');
      const issued = await probe(`${c.authUrl}/oauth/token`, {
        method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials',
      });
      assert.equal(issued.status, 200);
      await proxy.restore();
      const back = await secondsUntil(async () => {
        const r = await fetch(`${c.authUrl}/readyz`);
        return { status: ((await r.json()) as { status: string }).status === 'ready' ? 200 : 0, ms: 0, retryAfter: null };
      }, 200);
      assert.equal((await signIn(c.authUrl, 'hana', password)).status, 303);
      t.diagnostic(`started without Redis in ${readyIn.toFixed(2)} s (serving tokens), ready ${back.toFixed(2)} s after Redis returned`);
      assert.ok(c.alive, c.dump());
    } finally {
      await proxy.restore();
      await c.stop();
    }
  });
});
