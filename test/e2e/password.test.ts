import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { discover, oauthError } from './support.js';

// openid-client has no helper for RFC 6749 §4.3 (RFC 9700 §2.4 forbids it), so it goes through genericGrantRequest.
for (const { kind, skip } of await databaseKinds()) {
  describe(`e2e: password grant with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    let user: { username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind });
      user = await server.createUser('carol');
    });
    after(() => server.close());

    it('issues tokens to a client registered for the grant, and they refresh', async () => {
      const client = await server.createClient({ redirectUris: [], grantTypes: ['password', 'refresh_token'], scope: 'user read' });
      const config = await discover(server, client.id, client.secret);
      const tokens = await oidc.genericGrantRequest(config, 'password', { username: user.username, password: user.password, scope: 'read' });
      assert.equal(tokens.scope, 'read');
      assert.ok(tokens.access_token);
      assert.ok(tokens.refresh_token);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    });

    it('wrong credentials are invalid_grant', async () => {
      const client = await server.createClient({ redirectUris: [], grantTypes: ['password'] });
      const config = await discover(server, client.id, client.secret);
      const err = await oauthError(() => oidc.genericGrantRequest(config, 'password', { username: user.username, password: 'wrong password' }));
      assert.equal(err.error, 'invalid_grant');
    });

    it('a client without the grant gets unauthorized_client', async () => {
      const client = await server.createClient({});
      const config = await discover(server, client.id, client.secret);
      const err = await oauthError(() => oidc.genericGrantRequest(config, 'password', { username: user.username, password: user.password }));
      assert.equal(err.error, 'unauthorized_client');
    });
  });
}
