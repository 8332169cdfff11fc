/**
 * Audience restriction (RFC 9068 §4 step 4, RFC 9700 §2.3): UserInfo took a
 * token for another audience, and {api_url}/user a token naming none. Every
 * access-token check now requires `aud` to name the resource: the API URL,
 * which is also the audience Gatehouse issues the tokens UserInfo takes for.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createClient } from '../../src/core/admin.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertBearerError, callUser, seed } from '../resource/support.js';
import { freePort } from '../helpers/ports.js';

type Seeded = Awaited<ReturnType<typeof seed>>;

/** An access token signed with the server's own key, `aud` as given (`undefined`: none). */
function signedToken(gh: RunningGatehouse['gh'], issuer: string, s: Seeded, aud: unknown, scope = 'openid profile user') {
  const now = Math.floor(gh.clock.now() / 1000);
  const claims: Record<string, unknown> = { iss: issuer, sub: s.user.id, client_id: s.client.id, scope, iat: now, exp: now + 600, jti: randomUUID() };
  if (aud !== undefined) claims.aud = aud;
  return gh.keys.sign(claims, 'at+jwt');
}

const userinfo = (server: TestServer, token: string) => fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${token}` } });

for (const verification of ['table', 'local'] as const) {
  describe(`audience of access tokens (GATEHOUSE_TOKEN_VERIFICATION=${verification})`, () => {
    let server: TestServer;
    let s: Seeded;
    before(async () => {
      server = await startServer({ env: { GATEHOUSE_TOKEN_VERIFICATION: verification } });
      s = await seed(server);
    });
    after(() => server.close());

    // Guards `audienceMatches` in src/core/oidc/userinfo.ts.
    it('UserInfo takes only a token for the audience Gatehouse issues them for', async () => {
      const ok = await userinfo(server, signedToken(server.gh, server.url, s, server.apiUrl));
      assert.equal(ok.status, 200, await ok.clone().text());
      assert.equal(((await ok.json()) as { sub: string }).sub, s.user.id);
      for (const aud of ['https://other-api.example', undefined, ['https://other-api.example']]) {
        const res = await userinfo(server, signedToken(server.gh, server.url, s, aud));
        assert.equal(res.status, 401, `aud ${JSON.stringify(aud)}`);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer .*error="invalid_token"/);
      }
    });

    // Guards the required `aud` in src/core/resource/table.ts (and jwt.ts for `local`).
    it('/user refuses a token naming no audience or another one', async () => {
      assert.equal((await callUser(server.apiUrl, { token: signedToken(server.gh, server.url, s, server.apiUrl) })).status, 200);
      assert.equal((await callUser(server.apiUrl, { token: signedToken(server.gh, server.url, s, ['https://other-api.example', server.apiUrl]) })).status, 200);
      for (const aud of [undefined, 'https://other-api.example', '']) {
        assertBearerError(await callUser(server.apiUrl, { token: signedToken(server.gh, server.url, s, aud) }), 401, 'invalid_token');
      }
    });
  });
}

// Guards the required `aud` in src/core/resource/introspection.ts (also the middleware's introspection).
describe('audience of access tokens (GATEHOUSE_TOKEN_VERIFICATION=introspection)', () => {
  let dir: string;
  let auth: RunningGatehouse;
  let api: RunningGatehouse;
  let s: Seeded;
  const base = (d: string) => ({ GATEHOUSE_DATABASE_URL: `sqlite:${join(d, 'gatehouse.db')}`, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent' });
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gh-audience-'));
    const apiPort = String(await freePort());
    // Deployments name the API with GATEHOUSE_API_URL on both; settings are fixed at start, so its port is chosen first.
    auth = await startGatehouse(loadConfig({ ...base(dir), GATEHOUSE_ROLES: 'auth', GATEHOUSE_API_URL: `http://127.0.0.1:${apiPort}` }));
    const { client, secret } = await createClient(auth.gh.storage, auth.gh.clock, { name: 'Resource server', redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
    api = await startGatehouse(loadConfig({
      ...base(dir), GATEHOUSE_ROLES: 'api', GATEHOUSE_API_PORT: apiPort, GATEHOUSE_AUTH_URL: auth.authUrl, GATEHOUSE_TOKEN_VERIFICATION: 'introspection',
      GATEHOUSE_INTROSPECTION_CLIENT_ID: client.id, GATEHOUSE_INTROSPECTION_CLIENT_SECRET: secret!,
    }));
    s = await seed({ gh: auth.gh, url: auth.authUrl });
  });
  after(async () => {
    await api?.close();
    await auth?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('/user refuses a token the introspection answer names no audience for', async () => {
    assert.equal((await callUser(api.apiUrl, { token: signedToken(auth.gh, auth.authUrl, s, api.apiUrl) })).status, 200);
    for (const aud of [undefined, 'https://other-api.example']) {
      assertBearerError(await callUser(api.apiUrl, { token: signedToken(auth.gh, auth.authUrl, s, aud) }), 401, 'invalid_token');
    }
  });
});
