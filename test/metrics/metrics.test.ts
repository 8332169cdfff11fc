import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServer, type TestServer } from '../helpers/server.js';
import { signedInPerson } from '../helpers/people.js';
import { Agent } from '../helpers/agent.js';
import { ChatApi, botApi } from '../bot/support.js';
import { createBot } from '../../src/core/bot/manage.js';
import { createEndpoint } from '../../src/core/notify/endpoints.js';

/** The value of one sample of the Prometheus text (0 when absent); labels matched as given, in any order. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^([^{ ]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) total += Number(m[3]);
  }
  return total;
}

describe('Prometheus metrics (GATEHOUSE_METRICS_PORT)', () => {
  let server: TestServer;
  let metricsUrl: string;
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  const scrape = async () => {
    const res = await fetch(`${metricsUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return res.text();
  };

  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    server = await startServer({ env: { GATEHOUSE_METRICS_PORT: '0', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    assert.ok(server.metricsUrl);
    metricsUrl = server.metricsUrl;
  });
  after(async () => {
    await server?.close();
    receiver.close();
  });

  it('off unless set: no listener', async () => {
    const plain = await startServer();
    try {
      assert.equal(plain.metricsUrl, undefined);
    } finally {
      await plain.close();
    }
  });

  it('only GET /metrics: other paths 404, other methods 405', async () => {
    assert.equal((await fetch(`${metricsUrl}/`)).status, 404);
    assert.equal((await fetch(`${metricsUrl}/metrics`, { method: 'POST' })).status, 405);
  });

  it('after real traffic the counters have grown: requests by route and status, tokens, sign-ins, lockouts, Bot API, webhooks, process', async () => {
    const { gh } = server;
    const botUrl = server.bot!.url;
    const port = (receiver.address() as AddressInfo).port;
    await createEndpoint(gh.storage.events, gh.clock, { url: `http://127.0.0.1:${port}/hook`, events: ['*'] }, { checkUrl: gh.outbound.registered.check });
    const before = await scrape();

    // Requests on the three listeners.
    for (const base of [server.authUrl, server.apiUrl, botUrl]) assert.equal((await fetch(`${base}/healthz`)).status, 200);
    // A token by the client credentials grant.
    const job = await server.createClient({ name: 'Job', grantTypes: ['client_credentials'], redirectUris: [], scope: 'read' });
    const token = await fetch(`${server.authUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${job.id}:${job.secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials&scope=read',
    });
    assert.equal(token.status, 200, await token.clone().text());
    // Sign-ins: one right, failures until the account locks (429).
    const alice = await server.createUser('metrics_alice');
    assert.equal((await new Agent(server.url).login(alice.username, alice.password)).status, 303);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await new Agent(server.url).login(alice.username, 'wrong password')).status);
    assert.ok(statuses.includes(401) && statuses.includes(429), String(statuses));
    // Bot API: a person writes, the bot's getUpdates delivers it; a long poll is counted while it waits.
    const person = await signedInPerson(server, 'metrics_bob');
    const { token: botToken } = await createBot(gh.botStorage, gh.clock, { ownerUserId: alice.id, username: 'metrics_bot', name: 'Metrics' });
    await new ChatApi(botUrl, person).send('metrics_bot', 'hello');
    const updates = await botApi(botUrl, botToken, 'getUpdates', {});
    assert.equal((updates.body.result as unknown[]).length, 1);
    const offset = (updates.body.result as { update_id: number }[])[0]!.update_id + 1;
    const poll = botApi(botUrl, botToken, 'getUpdates', { offset, timeout: 2 });
    await new Promise((r) => setTimeout(r, 300));
    const during = await scrape();
    assert.equal(sample(during, 'gatehouse_bot_long_polls'), 1);
    await poll;
    // The events of this traffic (token.issued, user.locked, …) reach the receiver.
    for (let i = 0; i < 100 && received === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(received > 0, 'a webhook was delivered');

    const now = await scrape();
    const grew = (name: string, labels: Record<string, string> = {}, by = 1) =>
      assert.ok(sample(now, name, labels) - sample(before, name, labels) >= by, `${name} ${JSON.stringify(labels)}: ${sample(before, name, labels)} -> ${sample(now, name, labels)}`);
    for (const listener of ['auth', 'api', 'bot']) grew('gatehouse_http_requests_total', { listener, route: '/healthz', status: '200', method: 'GET' });
    grew('gatehouse_http_request_duration_seconds_count', { listener: 'auth', route: '/oauth/token', status: '200' });
    grew('gatehouse_tokens_issued_total', { grant_type: 'client_credentials' });
    grew('gatehouse_tokens_issued_total', { grant_type: 'password' });
    grew('gatehouse_sign_ins_total', { outcome: 'success' });
    grew('gatehouse_sign_ins_total', { outcome: 'failure' }, 5);
    grew('gatehouse_sign_ins_total', { outcome: 'locked' });
    grew('gatehouse_throttled_total', { listener: 'auth', route: '/login' });
    grew('gatehouse_bot_updates_delivered_total');
    grew('gatehouse_http_requests_total', { listener: 'bot', route: '/:bot/:method', status: '200' }, 2);
    grew('gatehouse_webhook_delivery_duration_seconds_count', { transport: 'webhook', outcome: 'ok' });
    assert.equal(sample(now, 'gatehouse_bot_long_polls'), 0);
    assert.match(now, /^gatehouse_webhook_backlog \d+$/m);
    // prom-client's process metrics.
    assert.ok(sample(now, 'process_cpu_user_seconds_total') > 0);
    assert.match(now, /^nodejs_eventloop_lag_seconds /m);
    // Route patterns, never URLs: no bot token, no query string in a label.
    assert.ok(!now.includes(botToken.split(':')[1]!), 'no bot token in the metrics');
    assert.doesNotMatch(now, /route="[^"]*\?/);
  });
});
