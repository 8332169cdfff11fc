import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createClient } from '../../src/core/admin.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { TestClock } from '../helpers/clock.js';
import { assertBearerError, callUser, seed } from './support.js';
import { freePort } from '../helpers/ports.js';

/**
 * GATEHOUSE_TOKEN_VERIFICATION=introspection: the resource server runs as a
 * process of its own (role `api`) and asks the authorization server (role
 * `auth`) over RFC 7662, as a client registered to introspect.
 */
describe('resource server /user, introspection', () => {
  const clock = new TestClock();
  let dir: string;
  let auth: RunningGatehouse;
  let api: RunningGatehouse;
  let s: Awaited<ReturnType<typeof seed>>;
  const base = (dir: string) => ({
    GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent',
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gh-introspect-'));
    const apiPort = String(await freePort());
    // Deployments name the API with GATEHOUSE_API_URL on both; settings are fixed at start, so its port is chosen first.
    auth = await startGatehouse(loadConfig({ ...base(dir), GATEHOUSE_ROLES: 'auth', GATEHOUSE_API_URL: `http://127.0.0.1:${apiPort}` }), { clock });
    const { client, secret } = await createClient(auth.gh.storage, clock, { name: 'Resource server', redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
    api = await startGatehouse(loadConfig({
      ...base(dir), GATEHOUSE_ROLES: 'api', GATEHOUSE_API_PORT: apiPort, GATEHOUSE_AUTH_URL: auth.authUrl, GATEHOUSE_TOKEN_VERIFICATION: 'introspection',
      GATEHOUSE_INTROSPECTION_CLIENT_ID: client.id, GATEHOUSE_INTROSPECTION_CLIENT_SECRET: secret!, GATEHOUSE_INTROSPECTION_CACHE_TTL: '10',
    }), { clock });
    s = await seed({ gh: auth.gh, url: auth.authUrl });
  });
  after(async () => {
    await api.close();
    await auth?.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts JWT and opaque tokens the authorization server says are active', async () => {
    assert.deepEqual((await callUser(api.apiUrl, { token: await s.token('profile') })).body, { username: 'alice', name: 'Alice Liddell' });
    const opaque = await seed({ gh: auth.gh, url: auth.authUrl }, { username: 'bob', tokenFormat: 'opaque' });
    const token = await opaque.token('user');
    assert.match(token, /^gh_at_/);
    assert.equal((await callUser(api.apiUrl, { query: { access_token: token } })).status, 200);
    const { refresh_token: refresh } = await s.tokens('user');
    assertBearerError(await callUser(api.apiUrl, { token: refresh! }), 401, 'invalid_token');
  });

  it('sees a revocation once the cached answer is older than GATEHOUSE_INTROSPECTION_CACHE_TTL', async () => {
    const token = await s.token('user');
    assert.equal((await callUser(api.apiUrl, { token })).status, 200);
    await s.revoke(token);
    assert.equal((await callUser(api.apiUrl, { token })).status, 200);
    clock.advance(10_001);
    assertBearerError(await callUser(api.apiUrl, { token }), 401, 'invalid_token');
  });

  it('answers 503, not 500, when the authorization server cannot be asked', async () => {
    const token = await s.token('user');
    await auth.close();
    const a = await callUser(api.apiUrl, { token });
    assert.equal(a.status, 503);
    assert.equal(a.body.error, 'temporarily_unavailable');
  });
});
