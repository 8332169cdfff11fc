import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.js';
import { bindListener } from '../../src/http/listener.js';
import { startGatehouse } from '../../src/server.js';

describe('listeners bound before the services: port 0 is final before anything reads the settings', () => {
  it('a bound listener answers 503 with Retry-After until its app takes it over (but /healthz 200: the process is alive), and closes', async () => {
    const listener = await bindListener('127.0.0.1', 0);
    try {
      assert.equal(listener.address, `http://127.0.0.1:${listener.port}`);
      const live = await fetch(`${listener.address}/healthz`);
      assert.equal(live.status, 200);
      assert.deepEqual(await live.json(), { status: 'ok' });
      const res = await fetch(`${listener.address}/oauth/token`);
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '1');
      assert.deepEqual(await res.json(), { error: 'temporarily_unavailable', error_description: 'starting' });
    } finally {
      await listener.close();
    }
    await assert.rejects(fetch(`${listener.address}/healthz`));
  });

  it('with port 0 every service sees the real URLs, in a frozen config, and nothing rewrites them', async () => {
    const running = await startGatehouse(loadConfig({
      GATEHOUSE_DATABASE_URL: 'sqlite::memory:', GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0',
      GATEHOUSE_ROLES: 'auth,api,bot', GATEHOUSE_LOG_LEVEL: 'silent',
    }));
    try {
      const { gh } = running;
      assert.match(running.authUrl, /^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
      assert.equal(gh.config.authUrl, running.authUrl);
      assert.equal(gh.config.apiUrl, running.apiUrl);
      assert.equal(gh.config.botApiUrl, running.bot?.url);
      assert.equal(gh.oauth.issuer, running.authUrl);
      assert.equal(gh.oauth.audience, running.apiUrl);
      assert.ok(Object.isFrozen(gh.config) && Object.isFrozen(gh.oauth));
      const meta = await (await fetch(`${running.authUrl}/.well-known/oauth-authorization-server`)).json() as { issuer: string };
      assert.equal(meta.issuer, running.authUrl);
      assert.equal((await fetch(`${running.apiUrl}/healthz`)).status, 200);
      assert.equal((await fetch(`${running.bot!.url}/healthz`)).status, 200);
    } finally {
      await running.close();
    }
  });
});
