/**
 * A process started while PostgreSQL is unreachable waits for it before
 * serving (src/store/startup.ts); meanwhile it is alive, so GET /healthz
 * answers 200 on every listener (the README's promise: a liveness probe must
 * not restart it in a loop) while /readyz and everything else answer 503.
 * Once the database is back it serves, and /readyz turns 200. The database
 * is reached through a TCP proxy the test controls, closed at start.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { loadConfig } from '../../src/config.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { dropDatabase, freshDatabaseUrl, postgresAvailable } from '../helpers/db.js';
import { TcpProxy } from '../helpers/proxy.js';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Polls `url` until it answers (the listener is bound early, but not at once). */
async function firstAnswer(url: string, ms = 15_000): Promise<Response> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await fetch(url, { signal: AbortSignal.timeout(2000) });
    } catch (e) {
      if (Date.now() > until) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const skip = (await postgresAvailable()) ? false : 'PostgreSQL is not running';

describe('liveness while the database is unreachable at start', { skip }, () => {
  const direct = freshDatabaseUrl('postgres');
  let proxy: TcpProxy;
  before(async () => {
    proxy = await TcpProxy.start(direct);
  });
  after(async () => {
    await proxy?.close();
    await dropDatabase(direct);
  });

  it('/healthz 200 and /readyz 503 while waiting, every listener; then ready once the database is back', async () => {
    await proxy.refuse();
    const ports = { auth: await freePort(), api: await freePort(), bot: await freePort() };
    const config = loadConfig({
      GATEHOUSE_DATABASE_URL: proxy.via(direct), GATEHOUSE_ROLES: 'auth,api,bot',
      GATEHOUSE_AUTH_PORT: String(ports.auth), GATEHOUSE_API_PORT: String(ports.api), GATEHOUSE_BOT_PORT: String(ports.bot), GATEHOUSE_LOG_LEVEL: 'silent',
    });
    let running: RunningGatehouse | undefined;
    const started = startGatehouse(config).then((r) => (running = r));
    try {
      for (const port of Object.values(ports)) {
        const base = `http://127.0.0.1:${port}`;
        const health = await firstAnswer(`${base}/healthz`);
        assert.equal(health.status, 200, `${base}/healthz while the database is unreachable`);
        assert.deepEqual(await health.json(), { status: 'ok' });
        const ready = await fetch(`${base}/readyz`);
        assert.equal(ready.status, 503);
        assert.equal(((await ready.json()) as { status: string }).status, 'starting');
        const other = await fetch(`${base}/oauth/token`, { method: 'POST' });
        assert.equal(other.status, 503);
        assert.equal(other.headers.get('retry-after'), '1');
      }
      assert.equal(running, undefined, 'still waiting for the database');
      await proxy.restore();
      await started;
      for (const port of Object.values(ports)) {
        assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
        assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      }
    } finally {
      await proxy.restore();
      await (running ?? (await started)).close();
    }
  });
});
