import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, codeFlow, discover, oauthError } from './support.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`e2e: refresh_token with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    let config: oidc.Configuration;
    let agent: Agent;
    let user: { username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind });
      user = await server.createUser('bob');
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'user read write' });
      config = await discover(server, client.id, client.secret);
      agent = new Agent(server.url);
    });
    after(() => server.close());

    it('rotates: every refresh returns a new refresh token, and the old one is refused', async () => {
      const first = await codeFlow(config, agent, user, 'user read');
      const second = await oidc.refreshTokenGrant(config, first.refresh_token!);
      assert.ok(second.refresh_token);
      assert.notEqual(second.refresh_token, first.refresh_token);
      assert.notEqual(second.access_token, first.access_token);
      assert.equal(second.scope, 'user read');
      const third = await oidc.refreshTokenGrant(config, second.refresh_token!);
      assert.notEqual(third.refresh_token, second.refresh_token);

      // RFC 9700 §4.14.2: a rotated token presented again revokes the family.
      const reuse = await oauthError(() => oidc.refreshTokenGrant(config, first.refresh_token!));
      assert.equal(reuse.error, 'invalid_grant');
      const cut = await oauthError(() => oidc.refreshTokenGrant(config, third.refresh_token!));
      assert.equal(cut.error, 'invalid_grant');
    });

    it('narrows the scope of the access token, never of the grant (RFC 6749 §6)', async () => {
      const first = await codeFlow(config, agent, user, 'user read write');
      const narrow = await oidc.refreshTokenGrant(config, first.refresh_token!, { scope: 'read' });
      assert.equal(narrow.scope, 'read');
      // The next refresh without a scope gets the whole original grant back.
      const full = await oidc.refreshTokenGrant(config, narrow.refresh_token!);
      assert.equal(full.scope, 'user read write');
      // Widening beyond the original grant is refused, and does not burn the token.
      const wide = await oauthError(() => oidc.refreshTokenGrant(config, full.refresh_token!, { scope: 'user admin' }));
      assert.equal(wide.error, 'invalid_scope');
      const still = await oidc.refreshTokenGrant(config, full.refresh_token!, { scope: 'write' });
      assert.equal(still.scope, 'write');
    });

    it('refuses a refresh token of another client and an unknown one', async () => {
      const mine = await codeFlow(config, agent, user, 'user');
      const other = await server.createClient({ redirectUris: [REDIRECT] });
      const otherConfig = await discover(server, other.id, other.secret);
      const foreign = await oauthError(() => oidc.refreshTokenGrant(otherConfig, mine.refresh_token!));
      assert.equal(foreign.error, 'invalid_grant');
      const garbage = await oauthError(() => oidc.refreshTokenGrant(config, 'gh_rt_not-a-token'));
      assert.equal(garbage.error, 'invalid_grant');
      // The foreign attempt did not burn the owner's token.
      assert.ok((await oidc.refreshTokenGrant(config, mine.refresh_token!)).refresh_token);
    });
  });
}
