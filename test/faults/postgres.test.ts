import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createClient } from '../../src/core/admin.js';
import { systemClock } from '../../src/core/ports.js';
import { openStorage } from '../../src/store/index.js';
import { PG_URL, dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';
import { TcpProxy } from '../helpers/proxy.js';
import { load, probe, secondsUntil, serve, sleep, tally, type Node } from './support.js';

const skip = (await postgresAvailable()) ? false : 'PostgreSQL not reachable';

/**
 * Gatehouse processes reach PostgreSQL through a proxy the test controls, so
 * the shared server is never restarted: backends terminated by the server,
 * the database cut for seconds, a start while it is down. No process may
 * exit; clients see 200s or fast 503s with Retry-After, never a hang or a
 * 500; service comes back within seconds without a restart.
 */
describe('PostgreSQL outages', { skip, timeout: 120_000 }, () => {
  const direct = freshDatabaseUrl('postgres');
  const appName = `gh_faults_${new URL(direct).searchParams.get('schema')}`;
  let proxy: TcpProxy;
  let node: Node;
  let basic = '';
  let viaProxy = '';

  const token = () => probe(`${node.authUrl}/oauth/token`, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials',
  });

  before(async () => {
    const storage = await openStorage(direct);
    const { client, secret } = await createClient(storage, systemClock, { name: 'faults', redirectUris: [], grantTypes: ['client_credentials'], tokenFormat: 'opaque' });
    await storage.close();
    basic = `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`;
    proxy = await TcpProxy.start(PG_URL);
    const u = new URL(proxy.via(direct));
    u.searchParams.set('application_name', appName);
    viaProxy = u.toString();
    // Every role, the outbox worker and the bot interface's background work included.
    node = await serve({ GATEHOUSE_DATABASE_URL: viaProxy, GATEHOUSE_ROLES: 'auth,api,bot,worker' }).ready();
  });
  after(async () => {
    await node?.stop();
    await proxy?.close();
    await dropDatabase(direct);
  });

  it('backends terminated by the server (pg_terminate_backend, 57P01): the process lives, requests keep succeeding', async (t) => {
    assert.equal((await token()).status, 200);
    const state = { stop: false };
    const running = load(token, state);
    await sleep(500);
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    let terminated = 0;
    try {
      for (let round = 0; round < 3; round++) {
        const r = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [appName]);
        terminated += r.rowCount ?? 0;
        await sleep(300);
      }
    } finally {
      await admin.end();
    }
    await sleep(500);
    state.stop = true;
    const seen = await running;
    const counts = tally(seen);
    t.diagnostic(`terminated ${terminated} backends in 3 rounds; clients saw ${JSON.stringify(counts)}`);
    assert.ok(terminated > 0, 'some backends were terminated');
    assert.ok(node.alive, `the process exited:\n${node.dump()}`);
    assert.deepEqual(Object.keys(counts).filter((s) => s !== '200' && s !== '503'), [], `only 200 or 503: ${JSON.stringify(counts)}`);
    for (const o of seen.filter((x) => x.status === 503)) assert.equal(o.retryAfter, '2');
    assert.equal((await token()).status, 200);
  });

  it('the database cut for 4 s: fast 503s with Retry-After, /readyz 503, /healthz 200, service back within seconds', async (t) => {
    assert.equal((await token()).status, 200);
    await proxy.refuse();
    const cutAt = performance.now();
    const during = [];
    for (let i = 0; i < 10; i++) during.push(await token());
    // The other surfaces' own 503s: an HTML page for a person, the Bot API envelope for a bot.
    const page = await probe(`${node.authUrl}/`, { headers: { accept: 'text/html', cookie: 'gh_session=some-session-id' } });
    const bot = await probe(`${node.botUrl}/bot1:${'a'.repeat(35)}/getMe`);
    const ready = await probe(`${node.authUrl}/readyz`);
    const health = await probe(`${node.authUrl}/healthz`);
    await sleep(Math.max(0, 4000 - (performance.now() - cutAt)));
    await proxy.restore();
    const back = await secondsUntil(token, 200);
    const readyBack = await secondsUntil(() => probe(`${node.authUrl}/readyz`), 200);
    t.diagnostic(`during the cut: token ${JSON.stringify(tally(during))}, slowest ${Math.round(Math.max(...during.map((o) => o.ms)))} ms; ` +
      `/readyz ${ready.status} in ${Math.round(ready.ms)} ms; /healthz ${health.status}; after restore: tokens in ${back.toFixed(2)} s, ready in ${readyBack.toFixed(2)} s`);
    assert.ok(node.alive, `the process exited:\n${node.dump()}`);
    for (const o of during) {
      assert.equal(o.status, 503);
      assert.equal(o.error, 'temporarily_unavailable');
      assert.equal(o.retryAfter, '2');
      assert.ok(o.ms < 2000, `answered in ${o.ms} ms`);
    }
    assert.equal(page.status, 503);
    assert.equal(page.retryAfter, '2');
    assert.equal(bot.status, 503);
    assert.equal(bot.error, 503, 'Bot API envelope error_code');
    assert.equal(bot.retryAfter, '2');
    assert.equal(ready.status, 503);
    assert.ok(ready.ms < 2000, `/readyz answered in ${ready.ms} ms`);
    assert.equal(health.status, 200);
    assert.ok(back < 5, `tokens again after ${back} s`);
  });

  it('a start while the database is down: the process waits, says so, then serves', async (t) => {
    await proxy.refuse();
    const late = serve({ GATEHOUSE_DATABASE_URL: viaProxy, GATEHOUSE_ROLES: 'auth,api,bot,worker' });
    try {
      await late.logged('database unreachable', 15_000);
      await sleep(3000);
      assert.ok(late.alive, `the process exited:\n${late.dump()}`);
      await proxy.restore();
      const restoredAt = performance.now();
      await late.ready(20_000);
      const readyIn = (performance.now() - restoredAt) / 1000;
      const saved = node;
      node = late;
      const first = await secondsUntil(token, 200);
      node = saved;
      t.diagnostic(`ready ${readyIn.toFixed(2)} s after the database came back, first token ${first.toFixed(2)} s later; ` +
        `${late.lines.filter((l) => String(l.msg).includes('database unreachable')).length} waiting line(s) logged`);
      assert.ok(readyIn < 5, `ready after ${readyIn} s`);
    } finally {
      await proxy.restore();
      await late.stop();
    }
  });
});
