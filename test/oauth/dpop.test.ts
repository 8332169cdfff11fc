import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { authorize, pkce, REDIRECT } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ath, dpopKey, proof } from './dpop-support.js';

/** End to end with an independent client (openid-client), then each check of RFC 9449 §4.3 with hand-made proofs. */

const ALGS = 'ES256 RS256 PS256 EdDSA Ed25519';

const payload = (jwt: string) => jose.decodeJwt(jwt) as Record<string, unknown> & { cnf?: Record<string, string> };

async function post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form) });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, string> };
}

async function get(url: string, headers: Record<string, string>) {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', body: (text ? JSON.parse(text) : {}) as Record<string, string> };
}

const ADMIN = 'admin-token-for-dpop-tests-0123456789';

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

for (const { kind, skip } of await databaseKinds()) {
  describe(`DPoP, RFC 9449 (${kind})`, { skip }, () => {
    let server: TestServer;
    let tokenUrl: string;
    let userUrl: string;
    let alice: { id: string; username: string; password: string };
    let introspector: { id: string; secret: string };
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
      tokenUrl = `${server.url}/oauth/token`;
      userUrl = `${server.apiUrl}/user`;
      alice = await server.createUser('alice');
      const i = await server.createClient({ grantTypes: ['client_credentials'], introspect: true });
      introspector = { id: i.id, secret: i.secret! };
    });
    after(() => server.close());

    const introspect = async (token: string) => (await post(`${server.url}/oauth/check_token`, { token }, basic(introspector.id, introspector.secret))).body as Record<string, unknown>;

    it('metadata: dpop_signing_alg_values_supported at the authorization server and the resource; bound tokens not required', async () => {
      const as = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.deepEqual(as.dpop_signing_alg_values_supported, ALGS.split(' '));
      const rs = (await (await fetch(`${server.apiUrl}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
      assert.deepEqual(rs.dpop_signing_alg_values_supported, ALGS.split(' '));
      assert.equal(rs.dpop_bound_access_tokens_required, false);
    });

    it('openid-client: client_credentials with DPoP gives a DPoP-bound JWT (cnf.jkt) and opaque token (introspection cnf.jkt, token_type DPoP)', async () => {
      for (const tokenFormat of ['jwt', 'opaque'] as const) {
        const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', tokenFormat, dpop: true });
        const config = await oidc.discovery(new URL(server.url), c.id, undefined, oidc.ClientSecretBasic(c.secret!), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] });
        const key = await dpopKey();
        const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read' }, { DPoP: oidc.getDPoPHandle(config, { privateKey: key.privateKey, publicKey: key.publicKey }) });
        assert.equal(tokens.token_type, 'dpop');
        if (tokenFormat === 'jwt') assert.deepEqual(payload(tokens.access_token).cnf, { jkt: key.jkt });
        const info = await introspect(tokens.access_token);
        assert.equal(info.active, true);
        assert.equal(info.token_type, 'DPoP');
        assert.deepEqual(info.cnf, { jkt: key.jkt });
      }
    });

    it('openid-client: code + PKCE + dpop_jkt for a public client, /user with DPoP, refresh bound to the key (RFC 9449 §5, §7, §10)', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', public: true, trusted: true });
      const config = await oidc.discovery(new URL(server.url), c.id, { token_endpoint_auth_method: 'none' }, oidc.None(), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] });
      // oauth4webapi names an Ed25519 key's algorithm Ed25519 (RFC 9864).
      const key = await dpopKey('EdDSA');
      const DPoP = oidc.getDPoPHandle(config, { privateKey: key.privateKey, publicKey: key.publicKey });
      const { verifier, challenge } = pkce();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'user', state: 'st', code_challenge: challenge, code_challenge_method: 'S256', dpop_jkt: key.jkt });
      const callback = await authorize(new Agent(server.url), url, { user: alice });
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' }, undefined, { DPoP });
      assert.equal(tokens.token_type, 'dpop');
      assert.deepEqual(payload(tokens.access_token).cnf, { jkt: key.jkt });

      const me = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(userUrl), 'GET', undefined, undefined, { DPoP });
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { username: string }).username, 'alice');

      // §7.2: the same token as a bearer token is refused, with both challenges.
      const asBearer = await get(userUrl, { authorization: `Bearer ${tokens.access_token}` });
      assert.equal(asBearer.status, 401);
      assert.equal(asBearer.body.error, 'invalid_token');
      assert.match(asBearer.challenge, /^Bearer realm="gatehouse", error="invalid_token", .*DPoP algs="ES256 RS256 PS256 EdDSA Ed25519"$/);
      // …and at userinfo, which takes bearer tokens only.
      assert.equal((await get(`${server.url}/userinfo`, { authorization: `Bearer ${tokens.access_token}` })).status, 401);

      // §5: the public client's refresh token needs a proof by the same key; a refusal does not burn it.
      const noProof = await post(tokenUrl, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: c.id });
      assert.deepEqual([noProof.status, noProof.body.error], [400, 'invalid_dpop_proof']);
      const other = await dpopKey();
      const wrongKey = await post(tokenUrl, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: c.id }, { dpop: await proof(other, 'POST', tokenUrl) });
      assert.deepEqual([wrongKey.status, wrongKey.body.error], [400, 'invalid_grant']);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
      assert.equal(refreshed.token_type, 'dpop');
      assert.deepEqual(payload(refreshed.access_token).cnf, { jkt: key.jkt });
      // The rotated refresh token stays bound.
      const again = await post(tokenUrl, { grant_type: 'refresh_token', refresh_token: refreshed.refresh_token!, client_id: c.id }, { dpop: await proof(other, 'POST', tokenUrl) });
      assert.deepEqual([again.status, again.body.error], [400, 'invalid_grant']);
    });

    it('dpop_jkt binds the code: redeemed without a proof or with another key is refused', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', public: true, trusted: true });
      const key = await dpopKey();
      const other = await dpopKey();
      const agent = new Agent(server.url);
      for (const [dpop, status, error] of [[undefined, 400, 'invalid_dpop_proof'], [other, 400, 'invalid_grant']] as const) {
        const { verifier, challenge } = pkce();
        const back = await authorize(agent, { response_type: 'code', client_id: c.id, redirect_uri: REDIRECT, scope: 'user', state: 's', code_challenge: challenge, code_challenge_method: 'S256', dpop_jkt: key.jkt }, { user: alice });
        const form = { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT, client_id: c.id, code_verifier: verifier };
        const r = await post(tokenUrl, form, dpop ? { dpop: await proof(dpop, 'POST', tokenUrl) } : {});
        assert.deepEqual([r.status, r.body.error], [status, error]);
        assert.equal(r.body.access_token, undefined);
      }
      // A malformed dpop_jkt goes back to the client as invalid_request.
      const back = await authorize(agent, { response_type: 'code', client_id: c.id, redirect_uri: REDIRECT, scope: 'user', state: 's', code_challenge: pkce().challenge, code_challenge_method: 'S256', dpop_jkt: 'nope' }, { user: alice });
      assert.equal(back.searchParams.get('error'), 'invalid_request');
    });

    it('admin API: dpop_bound_access_tokens (RFC 9449 §5.2) is stored and shown, and enforced', async () => {
      const res = await fetch(`${server.url}/admin/clients`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Bound', grant_types: ['client_credentials'], dpop_bound_access_tokens: true }),
      });
      assert.equal(res.status, 201);
      const c = (await res.json()) as { client_id: string; client_secret: string; dpop_bound_access_tokens?: boolean };
      assert.equal(c.dpop_bound_access_tokens, true);
      const r = await post(tokenUrl, { grant_type: 'client_credentials' }, basic(c.client_id, c.client_secret));
      assert.deepEqual([r.status, r.body.error], [400, 'invalid_dpop_proof']);
      const bad = await fetch(`${server.url}/admin/clients`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'Bad', grant_types: ['client_credentials'], dpop_bound_access_tokens: 'yes' }),
      });
      assert.equal(bad.status, 400);
    });

    it('CORS: a browser client may send the DPoP header to /user and read DPoP-Nonce', async () => {
      const pre = await fetch(userUrl, { method: 'OPTIONS', headers: { origin: 'https://spa.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, dpop' } });
      assert.match(pre.headers.get('access-control-allow-headers') ?? '', /\bDPoP\b/);
      assert.match(pre.headers.get('access-control-expose-headers') ?? '', /\bDPoP-Nonce\b/);
    });

    it('token endpoint: each bad proof is 400 invalid_dpop_proof with no token, and leaves its jti unused', async () => {
      const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', tokenFormat: 'opaque', dpop: true });
      const auth = basic(c.id, c.secret!);
      const key = await dpopKey();
      const cc = { grant_type: 'client_credentials' };
      const now = Math.floor(Date.now() / 1000);
      const { privateKey: otherPrivate } = await jose.generateKeyPair('ES256', { extractable: true });
      const privateJwk = await jose.exportJWK(key.privateKey);
      const jti = randomUUID();
      const bad: [string, string | undefined][] = [
        ['missing proof (a --dpop client)', undefined],
        ['wrong htm', await proof(key, 'GET', tokenUrl, { jti })],
        ['wrong htu', await proof(key, 'POST', `${server.url}/oauth/par`, { jti })],
        ['other origin', await proof(key, 'POST', tokenUrl.replace('127.0.0.1', 'localhost'), { jti })],
        ['stale iat', await proof(key, 'POST', tokenUrl, { jti, iat: now - 3600 })],
        ['iat from the future', await proof(key, 'POST', tokenUrl, { jti, iat: now + 3600 })],
        ['no jti', await proof(key, 'POST', tokenUrl, { jti: undefined })],
        ['typ JWT', await proof(key, 'POST', tokenUrl, { jti }, { typ: 'JWT' })],
        ['private key in jwk', await proof(key, 'POST', tokenUrl, { jti }, { jwk: privateJwk })],
        ['bad signature', await new jose.SignJWT({ jti, htm: 'POST', htu: tokenUrl, iat: now }).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }).sign(otherPrivate)],
        ['symmetric alg', await new jose.SignJWT({ jti, htm: 'POST', htu: tokenUrl, iat: now })
          .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: { kty: 'oct', k: 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0' } as jose.JWTHeaderParameters['jwk'] }).sign(new TextEncoder().encode('secretsecretsecretsecretsecret00'))],
        ['alg none', `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'dpop+jwt', jwk: key.jwk })).toString('base64url')}.${Buffer.from(JSON.stringify({ jti, htm: 'POST', htu: tokenUrl, iat: now })).toString('base64url')}.`],
        ['not a JWT', 'garbage'],
        ['two proofs', `${await proof(key, 'POST', tokenUrl)}, ${await proof(key, 'POST', tokenUrl)}`],
      ];
      for (const [name, p] of bad) {
        const r = await post(tokenUrl, cc, { ...auth, ...(p !== undefined ? { dpop: p } : {}) });
        assert.deepEqual([r.status, r.body.error], [400, 'invalid_dpop_proof'], `${name}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.access_token, undefined, name);
      }
      // None of the refused proofs used up its jti; htu is compared without query and fragment (§4.3).
      const good = await post(tokenUrl, cc, { ...auth, dpop: await proof(key, 'POST', `${tokenUrl}?x=1#f`, { jti }) });
      assert.equal(good.status, 200, JSON.stringify(good.body));
      assert.equal(good.body.token_type, 'DPoP');
      assert.deepEqual((await introspect(good.body.access_token!)).cnf, { jkt: key.jkt });
    });

    it('a proof is single-use (jti): replayed once, and sent twice at the same moment, exactly one succeeds', async () => {
      const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', dpop: true });
      const auth = basic(c.id, c.secret!);
      const key = await dpopKey('PS256');
      const p = await proof(key, 'POST', tokenUrl);
      assert.equal((await post(tokenUrl, { grant_type: 'client_credentials' }, { ...auth, dpop: p })).status, 200);
      const replay = await post(tokenUrl, { grant_type: 'client_credentials' }, { ...auth, dpop: p });
      assert.deepEqual([replay.status, replay.body.error], [400, 'invalid_dpop_proof']);
      for (let round = 0; round < 3; round++) {
        const q = await proof(key, 'POST', tokenUrl);
        const both = await Promise.all([0, 1].map(() => post(tokenUrl, { grant_type: 'client_credentials' }, { ...auth, dpop: q })));
        assert.deepEqual(both.map((r) => r.status).sort(), [200, 400], JSON.stringify(both.map((r) => r.body)));
      }
    });

    it('resource server: proofs for another request, token, key, or used twice are 401 invalid_dpop_proof; schemes are not mixed', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true });
      const key = await dpopKey('RS256');
      const { verifier, challenge } = pkce();
      const back = await authorize(new Agent(server.url), { response_type: 'code', client_id: c.id, redirect_uri: REDIRECT, scope: 'user', state: 's', code_challenge: challenge, code_challenge_method: 'S256' }, { user: alice });
      const t = await post(tokenUrl, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, redirect_uri: REDIRECT, code_verifier: verifier }, { ...basic(c.id, c.secret!), dpop: await proof(key, 'POST', tokenUrl) });
      assert.equal(t.body.token_type, 'DPoP');
      // A confidential client's refresh token is bound by its authentication, not the key (§5).
      const token = t.body.access_token!;
      const dpopAuth = { authorization: `DPoP ${token}` };

      const ok = await proof(key, 'GET', userUrl, { ath: ath(token) });
      assert.equal((await get(userUrl, { ...dpopAuth, dpop: ok })).status, 200);
      const other = await dpopKey();
      const cases: [string, string | undefined][] = [
        ['used twice', ok],
        ['no proof', undefined],
        ['ath of another token', await proof(key, 'GET', userUrl, { ath: ath(`${token}x`) })],
        ['no ath', await proof(key, 'GET', userUrl)],
        ['wrong htm', await proof(key, 'POST', userUrl, { ath: ath(token) })],
        ['wrong htu', await proof(key, 'GET', `${server.apiUrl}/other`, { ath: ath(token) })],
        ['another key', await proof(other, 'GET', userUrl, { ath: ath(token) })],
        ['stale iat', await proof(key, 'GET', userUrl, { ath: ath(token), iat: Math.floor(Date.now() / 1000) - 3600 })],
      ];
      for (const [name, p] of cases) {
        const r = await get(userUrl, { ...dpopAuth, ...(p ? { dpop: p } : {}) });
        assert.equal(r.status, 401, name);
        assert.equal(r.body.error, 'invalid_dpop_proof', name);
        assert.match(r.challenge, new RegExp(`^Bearer realm="gatehouse", resource_metadata="[^"]+", DPoP error="invalid_dpop_proof", error_description="[^"]+", algs="${ALGS}"$`), name);
      }
      // A DPoP token cannot also come in the query; an unbound token is not accepted under the DPoP scheme.
      assert.equal((await get(`${userUrl}?access_token=${token}`, { ...dpopAuth, dpop: await proof(key, 'GET', userUrl, { ath: ath(token) }) })).status, 400);
      const plain = await post(tokenUrl, { grant_type: 'refresh_token', refresh_token: t.body.refresh_token! }, basic(c.id, c.secret!));
      assert.equal(plain.body.token_type, 'Bearer');
      const unbound = await get(userUrl, { authorization: `DPoP ${plain.body.access_token}`, dpop: await proof(key, 'GET', userUrl, { ath: ath(plain.body.access_token!) }) });
      assert.deepEqual([unbound.status, unbound.body.error], [401, 'invalid_token']);
      assert.match(unbound.challenge, /DPoP error="invalid_token"/);
      assert.equal((await get(userUrl, { authorization: `Bearer ${plain.body.access_token}` })).status, 200);
    });
  });
}
