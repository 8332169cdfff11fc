import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { authorize } from '../helpers/authorize.js';
import { REDIRECT, discover } from './support.js';

/**
 * RFC 6749 §4.2. openid-client builds the request but (rightly) will not
 * process a response_type=token answer, so the fragment is read here.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`e2e: implicit grant with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    let user: { username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind });
      user = await server.createUser('dave');
    });
    after(() => server.close());

    const request = (config: oidc.Configuration, state: string) =>
      oidc.buildAuthorizationUrl(config, { response_type: 'token', redirect_uri: REDIRECT, scope: 'user', state });

    it('returns the access token in the fragment with state and iss', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], grantTypes: ['implicit'], public: true });
      const config = await discover(server, client.id);
      const state = oidc.randomState();
      const back = await authorize(new Agent(server.url), request(config, state), { user });
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
      assert.equal(back.search, '', 'nothing in the query (RFC 6749 §4.2.2)');
      const f = new URLSearchParams(back.hash.slice(1));
      assert.equal(f.get('state'), state);
      assert.equal(f.get('iss'), server.url);
      assert.equal(f.get('token_type'), 'Bearer');
      assert.equal(f.get('scope'), 'user');
      assert.ok(Number(f.get('expires_in')) > 0);
      assert.ok(f.get('access_token'));
      // §4.2.2: never a refresh token.
      assert.equal(f.get('refresh_token'), null);
    });

    it('a client without implicit gets unauthorized_client on its redirect URI', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], public: true, grantTypes: ['authorization_code'] });
      const config = await discover(server, client.id);
      const state = oidc.randomState();
      // The error is known before anyone signs in, so no login happens.
      const res = await new Agent(server.url).get(request(config, state).href);
      assert.equal(res.status, 302);
      const back = new URL(res.headers.get('location')!);
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
      const f = new URLSearchParams(back.hash.slice(1));
      assert.equal(f.get('error'), 'unauthorized_client');
      assert.equal(f.get('state'), state);
      assert.equal(f.get('iss'), server.url);
      assert.equal(f.get('access_token'), null);
    });
  });
}
