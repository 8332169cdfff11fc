import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
// jose comes with openid-client: a second, independent JOSE implementation to check our tokens with.
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import * as oidc from 'openid-client';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { discover, oauthError } from './support.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`e2e: client_credentials with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind });
    });
    after(() => server.close());

    it('issues an RFC 9068 JWT access token that verifies against the published JWKS', async () => {
      const client = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'read write' });
      const config = await discover(server, client.id, client.secret);
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read' });
      assert.equal(tokens.scope, 'read');
      // RFC 6749 §4.4.3: no refresh token for client credentials.
      assert.equal(tokens.refresh_token, undefined);

      const header = decodeProtectedHeader(tokens.access_token);
      assert.equal(header.typ, 'at+jwt'); // RFC 9068 §2.1
      assert.equal(header.alg, 'ES256');
      const meta = config.serverMetadata();
      const jwks = (await (await fetch(meta.jwks_uri!)).json()) as { keys: { kid: string; alg?: string; kty: string }[] };
      const published = jwks.keys.find((k) => k.kid === header.kid);
      assert.ok(published, 'the signing key is published in the JWKS');
      assert.equal(published.kty, 'EC');

      const { payload } = await jwtVerify(tokens.access_token, createRemoteJWKSet(new URL(meta.jwks_uri!)), {
        issuer: meta.issuer,
        audience: server.gh.oauth.audience,
        typ: 'at+jwt',
        algorithms: ['ES256'],
      });
      // RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat, jti; sub is the client itself here.
      assert.equal(payload.sub, client.id);
      assert.equal(payload.client_id, client.id);
      assert.equal(payload.scope, 'read');
      assert.equal(typeof payload.jti, 'string');
      assert.equal(typeof payload.iat, 'number');
      assert.equal(payload.exp, payload.iat! + tokens.expires_in!);
    });

    it('issues an opaque access token to a client registered for them', async () => {
      const client = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], tokenFormat: 'opaque', authMethod: 'client_secret_post' });
      const config = await discover(server, client.id, client.secret, oidc.ClientSecretPost());
      const tokens = await oidc.clientCredentialsGrant(config);
      assert.equal(tokens.scope, 'user'); // the registered default (RFC 6749 §3.3)
      assert.match(tokens.access_token, /^gh_at_/);
      assert.equal(tokens.access_token.split('.').length, 1, 'not a JWT');
      assert.ok(tokens.expires_in! > 0);
    });

    it('refuses a scope outside the registration, a wrong secret, and a client without the grant', async () => {
      const client = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], scope: 'read' });
      const config = await discover(server, client.id, client.secret);
      assert.equal((await oauthError(() => oidc.clientCredentialsGrant(config, { scope: 'admin' }))).error, 'invalid_scope');

      const wrong = await discover(server, client.id, 'not-the-secret');
      const denied = await oauthError(() => oidc.clientCredentialsGrant(wrong));
      assert.equal(denied.error, 'invalid_client');
      assert.equal(denied.status, 401);
      assert.equal(denied.challenge, 'basic'); // RFC 6749 §5.2: the header was used, so a Basic challenge

      const webApp = await server.createClient({});
      const webConfig = await discover(server, webApp.id, webApp.secret);
      assert.equal((await oauthError(() => oidc.clientCredentialsGrant(webConfig))).error, 'unauthorized_client');
    });
  });
}
