import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { visit } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

/**
 * The Model Context Protocol's authorization path, as an MCP client takes
 * it knowing only the resource's URL: 401 → RFC 9728 metadata → RFC 8414
 * metadata → RFC 7591 registration (open) as a public client → code + PKCE
 * with RFC 8707 `resource` → a token whose `aud` is the resource → the
 * resource answers. openid-client (an independent implementation) does the
 * client's protocol work.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`the MCP path: from a resource URL to a token (${kind})`, { skip }, () => {
    let server: TestServer;
    let alice: { username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_REGISTRATION: 'open' } });
      alice = await server.createUser('alice');
    });
    after(async () => server?.close());

    it('discovers, registers, authorizes with PKCE and resource, and calls the resource', async () => {
      const resourceUrl = `${server.apiUrl}/user`;
      // 1. The resource without a token: 401 pointing at its metadata (RFC 9728 §5.1).
      const first = await fetch(resourceUrl);
      assert.equal(first.status, 401);
      const metadataUrl = /resource_metadata="([^"]+)"/.exec(first.headers.get('www-authenticate') ?? '')?.[1];
      assert.ok(metadataUrl, first.headers.get('www-authenticate') ?? 'no challenge');

      // 2. Protected resource metadata: the resource identifier and its authorization server.
      const prm = (await (await fetch(metadataUrl)).json()) as { resource: string; authorization_servers: string[] };
      assert.equal(prm.resource, server.apiUrl);
      const issuer = prm.authorization_servers[0]!;
      assert.equal(issuer, server.url);

      // 3 + 4. Authorization server metadata (RFC 8414) and registration (RFC 7591) by openid-client.
      const asMeta = (await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.equal(asMeta.registration_endpoint, `${issuer}/oauth/register`);
      assert.ok((asMeta.code_challenge_methods_supported as string[]).includes('S256'));
      const redirectUri = 'http://127.0.0.1:33418/callback';
      const config = await oidc.dynamicClientRegistration(new URL(issuer), {
        client_name: 'An MCP client', redirect_uris: [redirectUri], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none',
      }, oidc.None(), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] });
      const clientId = config.clientMetadata().client_id;
      assert.ok(clientId);
      assert.equal(config.clientMetadata().client_secret, undefined);

      // 5. Authorization code with PKCE and the resource (RFC 8707 §2.1); the person sees the consent page.
      const verifier = oidc.randomPKCECodeVerifier();
      const challenge = await oidc.calculatePKCECodeChallenge(verifier);
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: redirectUri, scope: 'user', state, code_challenge: challenge, code_challenge_method: 'S256', resource: prm.resource });
      const agent = new Agent(server.url);
      const { callback, sawConsent } = await visit(agent, url, { user: alice });
      assert.ok(sawConsent, 'a registered client is never trusted');
      assert.equal(callback.searchParams.get('iss'), issuer);

      // 6. The token: its audience is the resource.
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, { resource: prm.resource });
      assert.equal(payloadOf(tokens.access_token).aud, prm.resource);
      assert.ok(tokens.refresh_token);

      // 7. The resource answers.
      const me = await fetch(resourceUrl, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { username: string }).username, 'alice');

      // A refresh keeps the audience (RFC 8707 §2.2).
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: prm.resource });
      assert.equal(payloadOf(refreshed.access_token).aud, prm.resource);
    });
  });
}
