import { after, before, describe, it } from 'node:test';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson } from './support.js';
import type { TestServer } from '../helpers/server.js';
import { createClient, createUser } from '../../src/core/admin.js';

const skip = !(await postgresAvailable()) ? 'PostgreSQL not reachable' : !(await redisAvailable()) ? 'Redis not reachable' : false;

/**
 * Two Gatehouse processes on one PostgreSQL database and one Redis: a
 * getUpdates waiting on one wakes when a person writes through the other,
 * and a newer getUpdates on either ends the older with 409.
 */
describe('long polling across two nodes (Redis wake-ups)', { skip, timeout: 60_000 }, () => {
  const databaseUrl = freshDatabaseUrl('postgres');
  const prefix = freshRedisPrefix();
  let a: RunningGatehouse;
  let b: RunningGatehouse;
  let token: string;
  let chat: ChatApi;

  // Node B runs only the bot role and trusts node A's issuer, as a scaled-out deployment does.
  const node = (extra: Record<string, string>) => startGatehouse(loadConfig({
    GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix,
    GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', ...extra,
  }));

  before(async () => {
    a = await node({ GATEHOUSE_ROLES: 'auth,bot' });
    b = await node({ GATEHOUSE_ROLES: 'bot', GATEHOUSE_AUTH_URL: a.authUrl });
    // The people-facing helpers want a TestServer; node A is one in all but name.
    const asServer = Object.assign(Object.create(a) as TestServer, {
      url: a.authUrl,
      createUser: async (username: string, password = 'correct horse battery staple') => {
        const u = await createUser(a.gh.storage, a.gh.hasher, a.gh.clock, { username, email: `${username}@example.test`, password });
        return { id: u.id, username, password };
      },
      createClient: async (input: Parameters<TestServer['createClient']>[0]) => {
        const { client, secret } = await createClient(a.gh.storage, a.gh.clock, { name: 'Test app', redirectUris: [], ...input });
        return { id: client.id, secret };
      },
    });
    chat = new ChatApi(b.bot!.url, await signedInPerson(asServer, 'hana'));
    token = await botViaBotFather(chat, 'Twin', 'twin_nodes_bot');
  });
  after(async () => {
    await b?.close();
    await a?.close();
    await dropDatabase(databaseUrl);
    await dropRedisPrefix(prefix);
  });

  it('wakes a poll on node A when the person writes through node B', async () => {
    const waiting = botApi(a.bot!.url, token, 'getUpdates', { timeout: 20 });
    await new Promise((r) => setTimeout(r, 200));
    await chat.send('twin_nodes_bot', 'across');
    const got = await waiting;
    assert.equal(got.status, 200);
    const updates = got.body.result as { update_id: number; message: { text: string } }[];
    assert.equal(updates[0]?.message.text, 'across');
    await botApi(a.bot!.url, token, 'getUpdates', { offset: updates[0]!.update_id + 1 });
  });

  it('ends the older poll on node A with 409 when node B starts one', async () => {
    const older = botApi(a.bot!.url, token, 'getUpdates', { timeout: 20 });
    await new Promise((r) => setTimeout(r, 200));
    const newer = botApi(b.bot!.url, token, 'getUpdates', { timeout: 1 });
    const first = await older;
    assert.equal(first.status, 409);
    assert.equal((await newer).status, 200);
  });

  it('delivers each update by webhook once, from one node at a time', async () => {
    const seen: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push((JSON.parse(body) as { message: { text: string } }).message.text);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      assert.equal((await botApi(a.bot!.url, token, 'setWebhook', { url })).status, 200);
      for (const t of ['w1', 'w2', 'w3']) await chat.send('twin_nodes_bot', t);
      for (let i = 0; i < 100 && seen.length < 3; i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(seen, ['w1', 'w2', 'w3']);
    } finally {
      await botApi(a.bot!.url, token, 'deleteWebhook');
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
