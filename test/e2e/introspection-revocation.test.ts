import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, codeFlow, discover, oauthError } from './support.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`e2e: introspection and revocation with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    let user: { id: string; username: string; password: string };
    /** The application that gets and revokes tokens. */
    let app: oidc.Configuration;
    let appId: string;
    /** A resource server allowed to introspect (RFC 7662 §2.1). */
    let rs: oidc.Configuration;
    let agent: Agent;
    before(async () => {
      server = await startServer({ db: kind });
      user = await server.createUser('erin');
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'user read' });
      appId = client.id;
      app = await discover(server, client.id, client.secret);
      const resource = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
      rs = await discover(server, resource.id, resource.secret);
      agent = new Agent(server.url);
    });
    after(() => server.close());

    it('describes an active access token and an active refresh token', async () => {
      const tokens = await codeFlow(app, agent, user, 'user read');
      const at = await oidc.tokenIntrospection(rs, tokens.access_token);
      assert.equal(at.active, true);
      assert.equal(at.client_id, appId);
      assert.equal(at.sub, user.id);
      assert.equal(at.username, user.username);
      assert.equal(at.scope, 'user read');
      assert.equal(at.iss, server.url);
      assert.equal(at.token_type, 'Bearer');
      assert.ok(typeof at.exp === 'number' && typeof at.iat === 'number' && at.exp > at.iat);

      const rt = await oidc.tokenIntrospection(rs, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
      assert.equal(rt.active, true);
      assert.equal(rt.client_id, appId);
    });

    it('says only active: false for garbage (RFC 7662 §2.2)', async () => {
      for (const garbage of ['not-a-token', 'gh_at_nothing', 'gh_rt_nothing', 'a.b.c']) {
        assert.deepEqual(await oidc.tokenIntrospection(rs, garbage), { active: false });
      }
    });

    it('refuses a client not registered to introspect', async () => {
      const tokens = await codeFlow(app, agent, user, 'user');
      const err = await oauthError(() => oidc.tokenIntrospection(app, tokens.access_token));
      assert.equal(err.error, 'unauthorized_client');
    });

    it('revoking an access token makes it inactive, and leaves the refresh token alone', async () => {
      const tokens = await codeFlow(app, agent, user, 'user');
      await oidc.tokenRevocation(app, tokens.access_token, { token_type_hint: 'access_token' });
      assert.equal((await oidc.tokenIntrospection(rs, tokens.access_token)).active, false);
      assert.equal((await oidc.tokenIntrospection(rs, tokens.refresh_token!)).active, true);
      // RFC 7009 §2.2: revoking again, or an unknown token, is still 200.
      await oidc.tokenRevocation(app, tokens.access_token);
      await oidc.tokenRevocation(app, 'not-a-token');
    });

    it('revoking a refresh token ends its family: every access token of the grant goes inactive (RFC 7009 §2.1)', async () => {
      const first = await codeFlow(app, agent, user, 'user read');
      const second = await oidc.refreshTokenGrant(app, first.refresh_token!);
      await oidc.tokenRevocation(app, second.refresh_token!, { token_type_hint: 'refresh_token' });
      for (const t of [first.access_token, second.access_token, second.refresh_token!]) {
        assert.equal((await oidc.tokenIntrospection(rs, t)).active, false);
      }
      assert.equal((await oauthError(() => oidc.refreshTokenGrant(app, second.refresh_token!))).error, 'invalid_grant');
    });

    it('ignores a revocation request for another client’s token', async () => {
      const tokens = await codeFlow(app, agent, user, 'user');
      const other = await server.createClient({ redirectUris: [REDIRECT] });
      const otherConfig = await discover(server, other.id, other.secret);
      await oidc.tokenRevocation(otherConfig, tokens.refresh_token!);
      assert.equal((await oidc.tokenIntrospection(rs, tokens.refresh_token!)).active, true);
      assert.equal((await oidc.tokenIntrospection(rs, tokens.access_token)).active, true);
    });

    it('revokes opaque access tokens too', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], tokenFormat: 'opaque' });
      const config = await discover(server, client.id, client.secret);
      const tokens = await codeFlow(config, agent, user, 'user');
      assert.match(tokens.access_token, /^gh_at_/);
      assert.equal((await oidc.tokenIntrospection(rs, tokens.access_token)).active, true);
      await oidc.tokenRevocation(config, tokens.refresh_token!);
      assert.equal((await oidc.tokenIntrospection(rs, tokens.access_token)).active, false);
    });
  });
}
