import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { authorize } from '../helpers/authorize.js';
import { REDIRECT, codeFlow, discover, oauthError } from './support.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`e2e: authorization code with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    let user: { username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind });
      user = await server.createUser('alice');
    });
    after(() => server.close());

    it('discovers the RFC 8414 metadata', async () => {
      const client = await server.createClient({});
      const meta = (await discover(server, client.id, client.secret)).serverMetadata();
      assert.equal(meta.issuer, server.url);
      assert.equal(meta.authorization_response_iss_parameter_supported, true);
      assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    });

    it('confidential client, client_secret_basic, PKCE S256', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'user read' });
      const config = await discover(server, client.id, client.secret, oidc.ClientSecretBasic());
      const tokens = await codeFlow(config, new Agent(server.url), user, 'user read');
      assert.equal(tokens.token_type, 'bearer'); // oauth4webapi lower-cases it
      assert.equal(tokens.scope, 'user read');
      assert.ok(tokens.access_token);
      assert.ok(tokens.refresh_token);
      assert.equal(tokens.expires_in, 3600);
    });

    it('public client (none), PKCE S256', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], public: true, scope: 'user' });
      assert.equal(client.secret, undefined);
      const config = await discover(server, client.id, undefined, oidc.None());
      const tokens = await codeFlow(config, new Agent(server.url), user, 'user');
      assert.equal(tokens.scope, 'user');
      assert.ok(tokens.access_token);
      assert.ok(tokens.refresh_token);
    });

    it('confidential client, client_secret_post; the code is single-use', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], authMethod: 'client_secret_post' });
      const config = await discover(server, client.id, client.secret, oidc.ClientSecretPost());
      // Watch the token requests, to see the secret really travels in the body (RFC 6749 §2.3.1).
      const sent: oidc.CustomFetchOptions[] = [];
      config[oidc.customFetch] = (url, options) => {
        sent.push(options);
        return fetch(url, options);
      };
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT, scope: 'user', state,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const callback = await authorize(new Agent(server.url), url, { user });
      const checks = { pkceCodeVerifier: verifier, expectedState: state };
      const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
      assert.equal(tokens.scope, 'user');
      assert.equal(new Headers(sent[0]!.headers).get('authorization'), null);
      assert.equal(new URLSearchParams(String(sent[0]!.body)).get('client_secret'), client.secret);
      // RFC 6749 §4.1.2: a code works once.
      const replay = await oauthError(() => oidc.authorizationCodeGrant(config, callback, checks));
      assert.equal(replay.error, 'invalid_grant');
    });

    it('a wrong PKCE verifier is invalid_grant', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT] });
      const config = await discover(server, client.id, client.secret);
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT, scope: 'user', state,
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()), code_challenge_method: 'S256',
      });
      const callback = await authorize(new Agent(server.url), url, { user });
      const err = await oauthError(() =>
        oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: oidc.randomPKCECodeVerifier(), expectedState: state }));
      assert.equal(err.error, 'invalid_grant');
    });

    it('denied consent comes back as access_denied with state and iss (RFC 6749 §4.1.2.1, RFC 9207)', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT] });
      const config = await discover(server, client.id, client.secret);
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT, scope: 'user', state,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const callback = await authorize(new Agent(server.url), url, { user, approve: false });
      assert.equal(`${callback.origin}${callback.pathname}`, REDIRECT);
      assert.equal(callback.searchParams.get('error'), 'access_denied');
      assert.equal(callback.searchParams.get('state'), state);
      assert.equal(callback.searchParams.get('iss'), server.url);
      assert.equal(callback.searchParams.get('code'), null);
      // The library checks iss and state first, then surfaces the error.
      await assert.rejects(
        oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
        (e: unknown) => e instanceof oidc.AuthorizationResponseError && e.error === 'access_denied',
      );
    });
  });
}
