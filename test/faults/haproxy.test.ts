import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { createClient } from '../../src/core/admin.js';
import { systemClock } from '../../src/core/ports.js';
import { openStorage } from '../../src/store/index.js';
import { PG_URL, dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { track } from '../helpers/children.js';
import { TcpProxy } from '../helpers/proxy.js';
import { load, probe, serve, sleep, tally, type Node, type Outcome } from './support.js';

const CONFIG = join(import.meta.dirname, '../../examples/haproxy/haproxy.cfg');
const haproxyInstalled = spawnSync('haproxy', ['-v']).status === 0;
if (!haproxyInstalled && process.env.CI === 'true') throw new Error('haproxy is required in CI (.ci/run installs it from Debian)');
const skip = !haproxyInstalled ? 'haproxy not installed (apt-get install haproxy)'
  : !(await postgresAvailable()) ? 'PostgreSQL not reachable' : !(await redisAvailable()) ? 'Redis not reachable' : false;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

const seconds = (ms: number) => (ms / 1000).toFixed(2);

/** Seconds from `from` until the last answer that was not a 200 (0 when there was none after it). */
function fullServiceAfter(seen: (Outcome & { at: number })[], from: number): number {
  const bad = seen.filter((o) => o.at >= from && o.status !== 200).map((o) => o.at);
  return bad.length ? (Math.max(...bad) - from) / 1000 : 0;
}

/**
 * The trial of docs/deployment.md's "Running several processes": three processes
 * behind HAProxy, run with examples/haproxy/haproxy.cfg as it is, sharing
 * PostgreSQL and Redis through proxies the test cuts, under a steady load of
 * client-credentials token requests through the load balancer.
 */
describe('three processes behind HAProxy', { skip, timeout: 180_000 }, () => {
  const direct = freshDatabaseUrl('postgres');
  const appName = `gh_lb_${new URL(direct).searchParams.get('schema')}`;
  const prefix = freshRedisPrefix();
  let pgProxy: TcpProxy;
  let redisProxy: TcpProxy;
  let nodes: Node[] = [];
  let haproxy: ChildProcess | undefined;
  let lb = '';
  let basic = '';

  const token = () => probe(`${lb}/oauth/token`, {
    method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials',
  });

  /** Runs the load while `fault` runs; returns every answer with when it came. */
  async function under(fault: () => Promise<void>): Promise<(Outcome & { at: number })[]> {
    const state = { stop: false };
    const running = load(token, state, 6);
    await sleep(500);
    await fault();
    state.stop = true;
    return running;
  }

  before(async () => {
    const storage = await openStorage(direct);
    const { client, secret } = await createClient(storage, systemClock, { name: 'lb', redirectUris: [], grantTypes: ['client_credentials'], tokenFormat: 'opaque' });
    await storage.close();
    basic = `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`;
    pgProxy = await TcpProxy.start(PG_URL);
    redisProxy = await TcpProxy.start(REDIS_URL);
    const db = new URL(pgProxy.via(direct));
    db.searchParams.set('application_name', appName);
    const env = { GATEHOUSE_DATABASE_URL: db.toString(), GATEHOUSE_REDIS_URL: redisProxy.via(REDIS_URL), GATEHOUSE_REDIS_PREFIX: prefix };
    const port = await freePort();
    lb = `http://127.0.0.1:${port}`;
    nodes = await Promise.all([1, 2, 3].map(() => serve({ ...env, GATEHOUSE_AUTH_URL: lb, GATEHOUSE_TRUST_PROXY: 'true' }).ready()));
    // GATEHOUSE_AUTH_URL names the balancer; each node's own address is in fastify's listening line.
    const listen = await Promise.all(nodes.map(async (n) => /\/\/([^/\s]+)/.exec(String((await n.logged('Server listening at')).msg))![1]!));
    haproxy = track(spawn('haproxy', ['-db', '-f', CONFIG], {
      env: { ...process.env, GATEHOUSE_LB_BIND: `127.0.0.1:${port}`, GATEHOUSE_NODE1: listen[0]!, GATEHOUSE_NODE2: listen[1]!, GATEHOUSE_NODE3: listen[2]! },
      stdio: 'ignore',
    }));
    for (let i = 0; i < 100 && (await probe(`${lb}/healthz`, {}, 1000)).status !== 200; i++) await sleep(100);
    await sleep(1500);
  });
  after(async () => {
    haproxy?.kill('SIGTERM');
    await Promise.all(nodes.map((n) => n.stop()));
    await pgProxy?.close();
    await redisProxy?.close();
    await dropDatabase(direct);
    await dropRedisPrefix(prefix);
  });

  it('survives backends terminated, a database cut, a Redis cut and a SIGKILL; prints what clients saw and the seconds until full service', async (t) => {
    assert.equal((await token()).status, 200);
    const report: string[] = [];
    const check = (name: string, seen: Outcome[]) => {
      const counts = tally(seen);
      assert.deepEqual(Object.keys(counts).filter((s) => s !== '200' && s !== '503'), [], `${name}: only 200 or 503, got ${JSON.stringify(counts)}`);
      for (const o of seen.filter((x) => x.status === 503)) {
        assert.equal(o.retryAfter, '2', `${name}: 503 with Retry-After`);
        assert.equal(o.error, 'temporarily_unavailable', `${name}: the endpoint's own 503`);
      }
      const slowest = Math.max(...seen.map((o) => o.ms));
      assert.ok(slowest < 4000, `${name}: slowest answer ${slowest} ms`);
      return `${JSON.stringify(counts)}, slowest ${Math.round(slowest)} ms`;
    };

    // 1. Every backend of every node terminated by the server, three times.
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    let t0 = 0;
    let seen = await under(async () => {
      t0 = performance.now();
      for (let i = 0; i < 3; i++) {
        await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [appName]);
        await sleep(300);
      }
      await sleep(1000);
    });
    await admin.end();
    report.push(`backends terminated: ${check('terminated', seen)}; full service ${seconds(fullServiceAfter(seen, t0) * 1000)} s after the first termination`);

    // 2. The database unreachable for 5 s.
    let restoredAt = 0;
    seen = await under(async () => {
      await pgProxy.refuse();
      await sleep(5000);
      await pgProxy.restore();
      restoredAt = performance.now();
      await sleep(4000);
    });
    report.push(`database cut 5 s: ${check('database cut', seen)}; full service ${seconds(fullServiceAfter(seen, restoredAt) * 1000)} s after it returned`);

    // 3. Redis unreachable for 5 s: token issuance never notices.
    seen = await under(async () => {
      await redisProxy.refuse();
      await sleep(5000);
      await redisProxy.restore();
      await sleep(1000);
    });
    const redisCounts = check('Redis cut', seen);
    assert.deepEqual(Object.keys(tally(seen)), ['200'], 'tokens without Redis');
    report.push(`Redis cut 5 s: ${redisCounts}`);

    // 4. One node killed outright.
    let killedAt = 0;
    seen = await under(async () => {
      killedAt = performance.now();
      nodes[2]!.child.kill('SIGKILL');
      await sleep(3000);
    });
    report.push(`SIGKILL of one node: ${JSON.stringify(tally(seen))}; full service ${seconds(fullServiceAfter(seen, killedAt) * 1000)} s after`);

    for (const line of report) t.diagnostic(line);
    assert.ok(nodes[0]!.alive && nodes[1]!.alive, 'the other processes live');
  });
});
