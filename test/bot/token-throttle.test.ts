import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createUser } from '../../src/core/admin.js';
import { BOT_TOKEN_POLICY } from '../../src/core/bot/api.js';
import { createBot } from '../../src/core/bot/manage.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { serveProcess, type Node } from '../helpers/processes.js';
import { dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';

/** `gatehouse serve` with the bot role in a child process; its {bot_api_url} once ready. */
async function serveBot(env: Record<string, string>): Promise<Node & { botUrl: string }> {
  const node = await serveProcess({ ...env, GATEHOUSE_ROLES: 'bot' });
  return { ...node, botUrl: node.ready.bot_api_url };
}

const secret = () => randomBytes(27).toString('base64url').slice(0, 35);

/** getMe with a token from an address (X-Forwarded-For: both nodes trust the proxy header). */
async function getMe(base: string, token: string, address: string) {
  const res = await fetch(`${base}/bot${token}/getMe`, { headers: { 'x-forwarded-for': address } });
  const body = (await res.json()) as { ok: boolean; error_code?: number; description?: string; parameters?: { retry_after: number } };
  return { status: res.status, retryAfterHeader: res.headers.get('retry-after'), body };
}

function assertThrottled(r: Awaited<ReturnType<typeof getMe>>): void {
  assert.equal(r.status, 429);
  const retry = r.body.parameters?.retry_after;
  assert.ok(Number.isInteger(retry) && retry! >= 1 && retry! <= BOT_TOKEN_POLICY.windowMs / 1000, JSON.stringify(r.body));
  assert.equal(r.body.description, `Too Many Requests: retry after ${retry}`);
  assert.equal(r.retryAfterHeader, String(retry));
}

const pg = await postgresAvailable();
const redis = await redisAvailable();
const setups = [
  { name: 'SQLite file', skip: false as string | false },
  { name: 'PostgreSQL', skip: pg ? false : 'PostgreSQL not reachable' },
  { name: 'PostgreSQL with Redis counters', skip: !pg ? 'PostgreSQL not reachable' : !redis ? 'Redis not reachable' : false },
];

/**
 * Wrong bot tokens fired in parallel at two processes sharing one database
 * (and Redis, where it holds the counters): per bot id and per address, no
 * more than the limit are answered 401, the rest 429 in the Bot API envelope
 * with retry_after and Retry-After. The bot's own token keeps working.
 */
for (const setup of setups) {
  describe(`wrong bot tokens are throttled across two processes (${setup.name})`, { skip: setup.skip, timeout: 120_000 }, () => {
    let dir: string | undefined;
    let databaseUrl: string;
    let prefix: string | undefined;
    let a: RunningGatehouse;
    let b: Node & { botUrl: string };
    let token: string;
    let botId: string;
    const nodes = () => [a.bot!.url, b.botUrl];

    before(async () => {
      if (setup.name === 'SQLite file') {
        dir = mkdtempSync(join(tmpdir(), 'gh-throttle-'));
        databaseUrl = `sqlite:${join(dir, 'gatehouse.db')}`;
      } else {
        databaseUrl = freshDatabaseUrl('postgres');
      }
      if (setup.name.includes('Redis')) prefix = freshRedisPrefix();
      const env: Record<string, string> = {
        GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_TRUST_PROXY: 'true', GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_BOT_PORT: '0',
        ...(prefix ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}),
      };
      a = await startGatehouse(loadConfig({ ...env, GATEHOUSE_ROLES: 'bot', GATEHOUSE_LOG_LEVEL: 'silent' }));
      b = await serveBot(env);
      const owner = await createUser(a.gh.storage, a.gh.hasher, a.gh.clock, { username: 'owner', email: 'owner@example.test', password: 'correct horse battery staple' });
      token = (await createBot(a.gh.botStorage, a.gh.clock, { ownerUserId: owner.id, username: 'guarded_bot', name: 'Guarded' })).token;
      botId = token.split(':')[0]!;
    });
    after(async () => {
      await b?.stop();
      await a?.close();
      await dropDatabase(databaseUrl);
      if (prefix) await dropRedisPrefix(prefix);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('per bot id: at most the limit of wrong tokens are answered 401, from any address and either process', async () => {
      const n = BOT_TOKEN_POLICY.perCredential * 5;
      const results = await Promise.all(Array.from({ length: n }, (_, i) => getMe(nodes()[i % 2]!, `${botId}:${secret()}`, `10.1.${i >> 8}.${i & 255}`)));
      const unauthorized = results.filter((r) => r.status === 401);
      assert.equal(unauthorized.length, BOT_TOKEN_POLICY.perCredential, results.map((r) => r.status).join(','));
      for (const r of results.filter((x) => x.status !== 401)) assertThrottled(r);
      // Still locked for a fresh address; the bot's own token is served on both processes.
      assertThrottled(await getMe(b.botUrl, `${botId}:${secret()}`, '10.2.0.1'));
      for (const base of nodes()) {
        const mine = await getMe(base, token, '10.1.0.1');
        assert.equal(mine.status, 200, JSON.stringify(mine.body));
      }
    });

    it('per address: at most the limit of wrong tokens are answered 401, whatever bot ids they name', async () => {
      const n = BOT_TOKEN_POLICY.perAddress + 20;
      const results = await Promise.all(Array.from({ length: n }, (_, i) => getMe(nodes()[i % 2]!, `${900_000 + i}:${secret()}`, '10.3.0.1')));
      assert.equal(results.filter((r) => r.status === 401).length, BOT_TOKEN_POLICY.perAddress, results.map((r) => r.status).join(','));
      for (const r of results.filter((x) => x.status !== 401)) assertThrottled(r);
      // Malformed tokens count too (the part before ':' as typed, whatever it is).
      for (const bad of ['abc', '', '%00', `${'9'.repeat(40)}:x`]) assertThrottled(await getMe(a.bot!.url, bad, '10.3.0.1'));
      assert.equal((await getMe(a.bot!.url, 'abc', '10.4.0.1')).status, 401);
    });
  });
}
