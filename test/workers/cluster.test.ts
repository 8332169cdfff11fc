/**
 * GATEHOUSE_WORKERS=2: one `gatehouse serve` forks two workers that share the
 * listening sockets (src/infra/cluster-primary.ts). Every guarantee that
 * spans requests holds whichever worker answers each: long-poll wake-ups,
 * the getUpdates 409 rule, the sign-in lockout, single-use codes, sessions,
 * at-least-once events from the worker running the notification role. Each
 * request below is made on a connection of its own, and the primary hands
 * connections to the workers in turn, so both are exercised; the workers'
 * `connection accepted` lines (log level trace) show it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, createUser } from '../../src/core/admin.js';
import { createBot } from '../../src/core/bot/manage.js';
import { systemClock } from '../../src/core/ports.js';
import { argon2Hasher } from '../../src/infra/argon2.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { REDIRECT, issueCode } from '../helpers/authorize.js';
import { runCli } from '../helpers/cli.js';
import { postgresAvailable } from '../helpers/db.js';
import { loopback, sendFrom, serveProcess, type Node, type RawResponse } from '../helpers/processes.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { sharedDatabaseUrl } from '../store/fixtures.js';

const PASSWORD = 'correct horse battery staple';
/** The bot-wide flood limit of the suite: messages a second and the burst (the wake-up test sends 10 at most 7 a second). */
const FLOOD_RATE = 2;
const FLOOD_BURST = 12;
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = (r: RawResponse) => JSON.parse(r.body) as Record<string, unknown>;
const tally = (labels: string[]) => labels.reduce<Record<string, number>>((m, l) => ({ ...m, [l]: (m[l] ?? 0) + 1 }), {});

const backends = [
  { name: 'SQLite file', kind: 'sqlite' as const, redis: false, skip: false as string | false },
  { name: 'PostgreSQL', kind: 'postgres' as const, redis: false, skip: (await postgresAvailable()) ? false : 'PostgreSQL not reachable' },
  { name: 'SQLite file with Redis', kind: 'sqlite' as const, redis: true, skip: (await redisAvailable()) ? false : 'Redis not reachable' },
];

/** The workers' `connection accepted` lines so far, by worker (`worker` field). */
function accepted(node: Node): number[] {
  const out: number[] = [];
  for (const line of node.log().split('\n')) {
    if (!line.includes('"connection accepted"')) continue;
    try {
      out.push((JSON.parse(line) as { worker: number }).worker);
    } catch {
      // Two processes' lines may interleave in the shared pipe: such a line is skipped.
    }
  }
  return out;
}

/** The workers that accepted a connection after the first `from` lines of `accepted`. */
function workersSeen(node: Node, from = 0): Set<number> {
  return new Set(accepted(node).slice(from));
}

/** Both workers logged a `connection accepted` line after the first `from` (waiting a little: their lines come through a pipe). */
async function bothWorkersSeen(node: Node, from: number): Promise<void> {
  for (let i = 0; i < 40 && workersSeen(node, from).size < 2; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual([...workersSeen(node, from)].sort(), [1, 2]);
}

/** GET on a connection of its own; undefined when it fails or takes over 3 s (a connection handed to a worker as it was killed). */
function probe(url: string): Promise<number | undefined> {
  let req: ReturnType<typeof httpGet> | undefined;
  const answered = new Promise<number | undefined>((resolve) => {
    req = httpGet(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
      res.on('error', () => resolve(undefined));
    });
    req.on('error', () => resolve(undefined));
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => {
    req?.destroy();
    resolve(undefined);
  }, 3000)));
  return Promise.race([answered, late]).finally(() => clearTimeout(timer));
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

for (const backend of backends) {
  describe(`GATEHOUSE_WORKERS=2 (${backend.name})`, { skip: backend.skip, timeout: 240_000 }, () => {
    let node: Node;
    let storage: SqlStorage;
    let cleanup: () => Promise<void>;
    let pids: number[];
    const prefix = freshRedisPrefix();
    const received: { id: string; type: string; data: Record<string, unknown> }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const e = JSON.parse(body) as { type: string; data: Record<string, unknown> };
        received.push({ id: String(req.headers['webhook-id']), type: e.type, data: e.data });
        res.end();
      });
    });
    let bot: { token: string; username: string };
    let person: string;
    let chatApp: { id: string; secret: string };
    let webApp: { id: string; secret: string };
    let renewingApp: { id: string; secret: string };

    before(async () => {
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const shared = sharedDatabaseUrl(backend.kind);
      cleanup = shared.cleanup;
      const env = {
        GATEHOUSE_DATABASE_URL: shared.url, GATEHOUSE_WORKERS: '2', GATEHOUSE_LOG_LEVEL: 'trace', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true',
        // One bot-wide flood limit, small enough that two workers each with a bucket of their own would show (test below).
        GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: String(FLOOD_RATE), GATEHOUSE_BOT_FLOOD_GLOBAL_BURST: String(FLOOD_BURST), GATEHOUSE_METRICS_PORT: '0',
        ...(backend.redis ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}),
      };
      // Subscribed before the workers start, so every event they record is for it.
      const hook = await runCli(['webhook', 'create', '--url', `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, '--events', 'user.login.failed', '--json'], env);
      assert.equal(hook.code, 0, hook.stderr);
      node = await serveProcess(env);
      pids = (JSON.parse(node.log().split('\n').find((l) => l.includes('Gatehouse ready'))!) as { pids: number[] }).pids;
      storage = await openStorage(shared.url);
      const owner = await createUser(storage, argon2Hasher(), systemClock, { username: 'owner', email: 'owner@example.test', password: PASSWORD });
      const created = await createBot(storage.bot, systemClock, { ownerUserId: owner.id, username: 'relay_bot', name: 'Relay' });
      bot = { token: created.token, username: 'relay_bot' };
      const c = await createClient(storage, systemClock, { name: 'Chat', redirectUris: [], grantTypes: ['password'], scope: 'chat', trusted: true });
      chatApp = { id: c.client.id, secret: c.secret! };
      const w = await createClient(storage, systemClock, { name: 'Web', redirectUris: [REDIRECT], grantTypes: ['authorization_code'], scope: 'user', trusted: true });
      webApp = { id: w.client.id, secret: w.secret! };
      const r = await createClient(storage, systemClock, { name: 'Renewing', redirectUris: [REDIRECT], grantTypes: ['authorization_code', 'refresh_token'], scope: 'user', trusted: true });
      renewingApp = { id: r.client.id, secret: r.secret! };
      const t = await sendFrom(loopback(0, 7), node.url, '/oauth/token', {
        headers: { authorization: basic(chatApp.id, chatApp.secret) }, form: { grant_type: 'password', username: 'owner', password: PASSWORD, scope: 'chat' },
      });
      assert.equal(t.status, 200, t.body);
      person = json(t).access_token as string;
    });
    after(async () => {
      await node?.stop();
      await storage?.close();
      await cleanup?.();
      receiver.close();
      if (backend.redis) await dropRedisPrefix(prefix);
    });

    const botUrl = () => node.ready.bot_api_url;
    const rawJson = (path: string, body: unknown, headers: Record<string, string> = {}) => new Promise<RawResponse>((resolve, reject) => {
      const url = new URL(path, botUrl());
      void import('node:http').then(({ request }) => {
        const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        });
        req.on('error', reject);
        req.end(JSON.stringify(body));
      });
    });
    const call = (method: string, params: Record<string, unknown> = {}) => rawJson(`/bot${bot.token}/${method}`, params);
    const personSays = (text: string) => rawJson(`/client/chats/${bot.username}/messages`, { text }, { authorization: `Bearer ${person}` });

    it('the primary serves nothing itself: connections go to both workers', async () => {
      const from = accepted(node).length;
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => sendFrom(loopback(i, 6), node.url, '/healthz')));
      assert.deepEqual(answers.map((a) => a.status), Array(20).fill(200));
      await bothWorkersSeen(node, from);
      assert.equal(pids.length, 2);
      assert.ok(pids.every(alive), `pids ${pids.join(',')}`);
    });

    it('the primary serves /metrics summed over both workers', async () => {
      const metricsUrl = /"metrics_url":"([^"]+)"/.exec(node.log())![1]!;
      const healthz = async () => {
        const text = await (await fetch(metricsUrl)).text();
        return Number(/^gatehouse_http_requests_total\{listener="auth",method="GET",route="\/healthz",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
      };
      const before = await healthz();
      const from = accepted(node).length;
      await Promise.all(Array.from({ length: 20 }, (_, i) => sendFrom(loopback(i, 12), node.url, '/healthz')));
      await bothWorkersSeen(node, from);
      assert.equal(await healthz(), before + 20);
    });

    it('a getUpdates long poll is woken by a message sent through another connection (and worker), 20 times', async () => {
      // The bot's queue starts empty.
      const first = await call('getUpdates', { timeout: 0 });
      assert.equal(first.status, 200, first.body);
      let offset = 0;
      const from = accepted(node).length;
      const waits: number[] = [];
      for (let i = 0; i < 20; i++) {
        const poll = call('getUpdates', { offset, timeout: 20 });
        await sleep(150);
        const sent = await personSays(`wake ${i}`);
        assert.equal(sent.status, 200, sent.body);
        const t0 = performance.now();
        const got = await poll;
        waits.push(performance.now() - t0);
        const updates = json(got).result as { update_id: number; message: { text: string } }[];
        assert.equal(updates.at(-1)?.message.text, `wake ${i}`);
        offset = updates.at(-1)!.update_id + 1;
      }
      waits.sort((a, b) => a - b);
      console.log(`getUpdates woken ${waits.length} times: median ${waits[10]!.toFixed(1)} ms, slowest ${waits.at(-1)!.toFixed(1)} ms`);
      assert.ok(waits.at(-1)! < 500, `slowest wake-up ${waits.at(-1)} ms`);
      await bothWorkersSeen(node, from);
    });

    it('a person\'s long poll is woken by the bot\'s sendMessage made through another connection, 10 times', async () => {
      const chatId = (json(await call('getUpdates', { offset: -1 })).result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
      const waits: number[] = [];
      for (let i = 0; i < 10; i++) {
        const latest = json(await sendFrom('127.0.0.1', botUrl(), `/client/chats/${bot.username}/messages?after=0&timeout=0`, { headers: { authorization: `Bearer ${person}` } })).messages as { message_id: number }[];
        const after = latest.at(-1)!.message_id;
        const poll = sendFrom('127.0.0.1', botUrl(), `/client/chats/${bot.username}/messages?after=${after}&timeout=20`, { headers: { authorization: `Bearer ${person}` } });
        await sleep(150);
        const sent = await call('sendMessage', { chat_id: chatId, text: `reply ${i}` });
        assert.equal(sent.status, 200, sent.body);
        const t0 = performance.now();
        const got = json(await poll).messages as { text: string }[];
        waits.push(performance.now() - t0);
        assert.equal(got.at(-1)?.text, `reply ${i}`);
      }
      waits.sort((a, b) => a - b);
      console.log(`chat poll woken ${waits.length} times: median ${waits[5]!.toFixed(1)} ms, slowest ${waits.at(-1)!.toFixed(1)} ms`);
      assert.ok(waits.at(-1)! < 500, `slowest wake-up ${waits.at(-1)} ms`);
    });

    it('a newer getUpdates ends an older one with 409 whichever worker holds either, 6 times', async () => {
      const last = (json(await call('getUpdates', { offset: -1 })).result as { update_id: number }[]).at(-1)!;
      assert.equal((await call('getUpdates', { offset: last.update_id + 1 })).status, 200);
      for (let i = 0; i < 6; i++) {
        const older = call('getUpdates', { timeout: 20 });
        await sleep(200);
        const t0 = performance.now();
        const newer = call('getUpdates', { timeout: 1 });
        const ended = await older;
        const ms = performance.now() - t0;
        assert.equal(ended.status, 409, ended.body);
        assert.match(String(json(ended).description), /terminated by other getUpdates request/);
        assert.ok(ms < 1000, `409 after ${ms} ms`);
        assert.equal((await newer).status, 200);
      }
    });

    it('flood control is one for both workers: of 40 parallel sendMessage calls over fresh connections, at most the burst and its refill pass', async () => {
      assert.equal((await personSays('flood')).status, 200);
      const last = (json(await call('getUpdates', { offset: -1 })).result as { update_id: number; message: { chat: { id: number } } }[])[0]!;
      assert.equal((await call('getUpdates', { offset: last.update_id + 1 })).status, 200);
      const chatId = last.message.chat.id;
      const t0 = performance.now();
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => call('sendMessage', { chat_id: chatId, text: `flood ${i}` })));
      const seconds = (performance.now() - t0) / 1000;
      const passed = answers.filter((r) => r.status === 200).length;
      const refused = answers.filter((r) => r.status === 429);
      assert.equal(passed + refused.length, 40, answers.map((r) => r.status).join(' '));
      // A bucket per worker would let up to twice the burst through.
      assert.ok(passed <= FLOOD_BURST + Math.ceil(seconds * FLOOD_RATE), `${passed} passed in ${seconds.toFixed(2)} s`);
      for (const r of refused) assert.ok(((json(r).parameters as { retry_after: number }).retry_after) >= 1, r.body);
    });

    it('100 parallel sign-ins for one account over both workers: 5 evaluated, the rest refused; every failure is delivered as an event', async () => {
      const name = `acct-${randomBytes(3).toString('hex')}`;
      await createUser(storage, argon2Hasher(), systemClock, { username: name, email: `${name}@example.test`, password: PASSWORD });
      const page = await sendFrom(loopback(0, 9), node.url, '/login');
      const cookie = [page.headers['set-cookie'] ?? []].flat().map((c) => c.split(';')[0]).join('; ');
      const { fields } = parseForm(page.body);
      const from = accepted(node).length;
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) =>
        sendFrom(loopback(i), node.url, '/login', { headers: { cookie }, form: { ...fields, username: name, password: `wrong ${i}` } })));
      assert.deepEqual(tally(results.map((r) => (r.status === 401 ? 'evaluated' : r.status === 429 ? 'refused' : String(r.status)))), { evaluated: 5, refused: 95 });
      await bothWorkersSeen(node, from);
      // At least once, from both workers' commits, by the one notification worker (worker 1).
      const deadline = Date.now() + 20_000;
      const mine = () => new Set(received.filter((e) => e.type === 'user.login.failed' && e.data.username === name).map((e) => e.id));
      while (mine().size < 100 && Date.now() < deadline) await sleep(100);
      assert.equal(mine().size, 100);
    });

    it('a session made on one connection is honoured on 10 others; 20 parallel redemptions of one code: one winner', async () => {
      const agent = new Agent(node.url);
      const { code, verifier } = await issueCode(agent, webApp.id, {}, { user: { username: 'owner', password: PASSWORD } });
      const redeem = (i: number) => sendFrom(loopback(i, 8), node.url, '/oauth/token', {
        headers: { authorization: basic(webApp.id, webApp.secret) }, form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      });
      const from = accepted(node).length;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => redeem(i)));
      assert.deepEqual(tally(results.map((r) => String(r.status))), { 200: 1, 400: 19 });
      assert.ok(results.filter((r) => r.status === 400).every((r) => json(r).error === 'invalid_grant'), 'the losers get invalid_grant');
      await bothWorkersSeen(node, from);
      const authorizeAgain = await Promise.all(Array.from({ length: 10 }, (_, i) => sendFrom(loopback(i, 10), node.url,
        `/oauth2?${new URLSearchParams({ response_type: 'code', client_id: webApp.id, redirect_uri: REDIRECT, scope: 'user', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`,
        { headers: { cookie: agentCookies(agent) } })));
      for (const r of authorizeAgain) {
        assert.equal(r.status, 302, `${r.body.slice(0, 100)} ${node.log().split('\n').filter((l) => /"level":(50|40)|SQLITE|rror/.test(l)).slice(-4).join('\n')}`);
        assert.ok(new URL(String(r.headers.location)).searchParams.get('code'), String(r.headers.location));
      }
    });

    it('20 parallel uses of one refresh token over both workers: one rotation, the rest invalid_grant, and the family revoked', async () => {
      const agent = new Agent(node.url);
      const { code, verifier } = await issueCode(agent, renewingApp.id, {}, { user: { username: 'owner', password: PASSWORD } });
      const auth = { authorization: basic(renewingApp.id, renewingApp.secret) };
      const first = await sendFrom(loopback(0, 14), node.url, '/oauth/token', { headers: auth, form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier } });
      assert.equal(first.status, 200, first.body);
      const refreshToken = json(first).refresh_token as string;
      assert.ok(refreshToken, 'a refresh token was issued');
      const from = accepted(node).length;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => sendFrom(loopback(i, 15), node.url, '/oauth/token', {
        headers: auth, form: { grant_type: 'refresh_token', refresh_token: refreshToken },
      })));
      assert.deepEqual(tally(results.map((r) => String(r.status))), { 200: 1, 400: 19 });
      assert.ok(results.filter((r) => r.status === 400).every((r) => json(r).error === 'invalid_grant'), 'the losers get invalid_grant');
      await bothWorkersSeen(node, from);
      // The concurrent uses are reuse (RFC 9700 §4.14.2): the winner's new refresh token died with its family.
      const winner = json(results.find((r) => r.status === 200)!).refresh_token as string;
      const after = await sendFrom(loopback(0, 16), node.url, '/oauth/token', { headers: auth, form: { grant_type: 'refresh_token', refresh_token: winner } });
      assert.equal(after.status, 400, after.body);
      assert.equal(json(after).error, 'invalid_grant');
    });

    it('a worker killed with SIGKILL is started again and service goes on', { timeout: 90_000 }, async () => {
      const victim = pids[1]!;
      process.kill(victim, 'SIGKILL');
      const deadline = Date.now() + 30_000;
      const statuses: (number | undefined)[] = [];
      // At least 20 probes: on a quiet machine the new worker serves within one probe's time, and one
      // probe that met the dead worker's socket would otherwise be the whole sample.
      while ((!node.log().includes('"worker 2 serving again"') || statuses.length < 20) && Date.now() < deadline) {
        statuses.push(await probe(`${node.url}/healthz`));
        await sleep(50);
      }
      const served = statuses.filter((st) => st === 200).length;
      console.log(`while worker 2 was down: ${served} of ${statuses.length} requests answered 200, the others failed to connect or met the new worker starting (503)`);
      // A new worker answers 503 with Retry-After until its app is ready (src/http/listener.ts).
      assert.ok(statuses.every((st) => st === 200 || st === 503 || st === undefined), `statuses ${statuses.join(',')}`);
      // Round robin hands a starting worker every other connection (503 until its app is ready).
      assert.ok(served >= statuses.length / 3, `worker 1 kept serving: ${statuses.join(',')}`);
      assert.ok(node.log().includes('worker 2 serving again'), node.log().slice(-2000));
      assert.ok(!alive(victim), `${victim} still alive`);
      const from = accepted(node).length;
      const answers: (number | undefined)[] = [];
      for (let i = 0; i < 10; i++) answers.push(await probe(`${node.url}/healthz`));
      assert.deepEqual(answers, Array(10).fill(200));
      await bothWorkersSeen(node, from);
      const again = node.log().split('\n').filter((l) => l.includes('worker 2 serving again')).map((l) => (JSON.parse(l) as { worker_pid: number }).worker_pid);
      pids = [pids[0]!, again.at(-1)!];
    });

    it('SIGTERM to the primary stops both workers and exits 0', { timeout: 90_000 }, async () => {
      node.child.kill('SIGTERM');
      assert.equal(await node.exited, 0);
      await sleep(100);
      assert.deepEqual(pids.filter(alive), []);
    });
  });
}

/** Every cookie an Agent holds, as a Cookie header. */
function agentCookies(agent: Agent): string {
  const jar = (agent as unknown as { cookies: Map<string, string> }).cookies;
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}
