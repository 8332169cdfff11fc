import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, person, relyingParty, signIn } from './support.js';

/** OpenID Connect Core §3.1.3.6, computed independently of the server's code. */
const atHash = (token: string) => createHash('sha256').update(token).digest().subarray(0, 16).toString('base64url');

for (const { kind, skip } of await databaseKinds()) {
  describe(`OpenID Connect relying party with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    let alice: Awaited<ReturnType<typeof person>>;
    before(async () => {
      server = await startServer({ db: kind });
      alice = await person(server, 'alice');
    });
    after(() => server.close());

    it('discovers /.well-known/openid-configuration', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid' });
      const meta = (await relyingParty(server, client.id, client.secret)).serverMetadata();
      assert.equal(meta.issuer, server.url);
      assert.equal(meta.userinfo_endpoint, `${server.url}/userinfo`);
      assert.equal(meta.end_session_endpoint, `${server.url}/session/end`);
      // OpenID Connect Discovery §3: RS256 MUST be listed (test/oauth/rs256-id-token.test.ts covers it).
      assert.deepEqual(meta.id_token_signing_alg_values_supported, ['ES256', 'RS256']);
      assert.deepEqual(meta.subject_types_supported, ['public']);
      assert.equal(meta.backchannel_logout_supported, true);
      assert.equal(meta.backchannel_logout_session_supported, true);
      for (const s of ['openid', 'profile', 'email']) assert.ok(meta.scopes_supported?.includes(s), s);
      for (const c of ['sub', 'auth_time', 'nonce', 'at_hash', 'sid', 'name', 'preferred_username', 'email']) assert.ok(meta.claims_supported?.includes(c), c);
      // The RFC 8414 document is unchanged and still names the same endpoints.
      const oauth = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.equal(oauth.token_endpoint, meta.token_endpoint);
    });

    it('signs in, and the library validates the ID token: signature (discovered keys), nonce, at_hash, iss, aud', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile email' });
      const config = await relyingParty(server, client.id, client.secret);
      const started = Math.floor(server.gh.clock.now() / 1000);
      const { tokens, nonce } = await signIn(config, new Agent(server.url), alice, 'openid profile email');
      const claims = tokens.claims()!;
      assert.equal(claims.iss, server.url);
      assert.equal(claims.sub, alice.id);
      assert.equal(claims.aud, client.id);
      assert.equal(claims.nonce, nonce);
      assert.equal(typeof claims.sid, 'string');
      assert.ok(typeof claims.auth_time === 'number' && claims.auth_time >= started - 1);
      assert.equal(claims.at_hash, atHash(tokens.access_token));

      // The same check by another library, against the keys the discovery document names.
      const jwks = jose.createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
      const verified = await jose.jwtVerify(tokens.id_token!, jwks, { issuer: server.url, audience: client.id, algorithms: ['ES256'], typ: 'JWT' });
      assert.equal(verified.payload.sub, alice.id);
      // A token with one changed byte does not verify.
      const [h, , s] = tokens.id_token!.split('.');
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...verified.payload, sub: 'mallory' })).toString('base64url')}.${s}`;
      await assert.rejects(jose.jwtVerify(forged, jwks), /signature verification failed/);
    });

    it('a wrong nonce is refused by the relying party', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', trusted: true });
      const config = await relyingParty(server, client.id, client.secret);
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT, scope: 'openid', state, nonce: 'the-nonce-sent',
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      const res = await agent.get(`${url.pathname}${url.search}`);
      assert.equal(res.status, 302);
      const callback = new URL(res.headers.get('location')!);
      await assert.rejects(
        oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: 'another-nonce' }),
        (e: Error) => /nonce/.test(String((e.cause as Error | undefined)?.message)),
      );
    });

    it('userinfo gives the claims the scope allows, by GET and POST', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile email', trusted: true });
      const config = await relyingParty(server, client.id, client.secret);
      const full = await signIn(config, new Agent(server.url), alice, 'openid profile email');
      const info = await oidc.fetchUserInfo(config, full.tokens.access_token, alice.id);
      assert.deepEqual(info, { sub: alice.id, name: 'Alice Example', preferred_username: 'alice', email: alice.email, email_verified: false });

      const narrow = await signIn(config, new Agent(server.url), alice, 'openid');
      assert.deepEqual(await oidc.fetchUserInfo(config, narrow.tokens.access_token, alice.id), { sub: alice.id });

      const post = await fetch(`${server.url}/userinfo`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ access_token: full.tokens.access_token }),
      });
      assert.equal(post.status, 200);
      assert.equal(post.headers.get('cache-control'), 'no-store');
      assert.equal(((await post.json()) as { email: string }).email, alice.email);
    });

    it('userinfo refuses missing, bad and non-openid tokens with RFC 6750 errors', async () => {
      const none = await fetch(`${server.url}/userinfo`);
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate')!, /^Bearer realm="gatehouse"$/);

      const bad = await fetch(`${server.url}/userinfo`, { headers: { authorization: 'Bearer not-a-token' } });
      assert.equal(bad.status, 401);
      assert.match(bad.headers.get('www-authenticate')!, /error="invalid_token"/);

      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile', trusted: true });
      const config = await relyingParty(server, client.id, client.secret);
      const { tokens } = await signIn(config, new Agent(server.url), alice, 'openid');
      const plain = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', grantTypes: ['password'] });
      const pw = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${plain.id}:${plain.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: alice.username, password: alice.password }),
      });
      const { access_token } = (await pw.json()) as { access_token: string };
      const noOpenid = await fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${access_token}` } });
      assert.equal(noOpenid.status, 403);
      assert.match(noOpenid.headers.get('www-authenticate')!, /error="insufficient_scope", error_description="[^"]*", scope="openid"/);

      // Two ways at once is invalid_request (RFC 6750 §2).
      const twice = await fetch(`${server.url}/userinfo?access_token=${tokens.access_token}`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(twice.status, 400);
    });

    it('refresh returns a new ID token with the same sub, aud, auth_time and sid, and no nonce (Core §12.2)', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid offline_access', trusted: true });
      const config = await relyingParty(server, client.id, client.secret);
      const { tokens } = await signIn(config, new Agent(server.url), alice, 'openid offline_access');
      const first = tokens.claims()!;
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      const again = refreshed.claims()!;
      assert.ok(refreshed.id_token && refreshed.id_token !== tokens.id_token);
      for (const c of ['iss', 'sub', 'aud', 'auth_time', 'sid'] as const) assert.deepEqual(again[c], first[c], c);
      assert.equal(again.nonce, undefined);
      assert.equal(again.at_hash, atHash(refreshed.access_token));
    });

    it('no openid scope, no ID token', async () => {
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true });
      const config = await relyingParty(server, client.id, client.secret);
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT, scope: 'user', state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      const res = await agent.get(`${url.pathname}${url.search}`);
      const tokens = await oidc.authorizationCodeGrant(config, new URL(res.headers.get('location')!), { pkceCodeVerifier: verifier, expectedState: state });
      assert.equal(tokens.id_token, undefined);
    });
  });
}
