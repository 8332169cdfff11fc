/**
 * Issue 32 items 1, 2 and 5: an authorization request sent by POST (OpenID
 * Connect Core §3.1.2.1), request objects (RFC 9101, Core §6.1) signed and
 * unsigned, through PAR too, and the claims request parameter (Core §5.5)
 * with login_hint, driven by openid-client where it has the call.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { Agent, parseForm } from '../helpers/agent.js';
import { pkce } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, person, relyingParty, visit } from './support.js';

const unsigned = (claims: Record<string, unknown>) => `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

for (const { kind, skip } of await databaseKinds()) {
  describe(`authorization requests by POST, request objects and the claims parameter (${kind})`, { skip }, () => {
    let server: TestServer;
    let alice: Awaited<ReturnType<typeof person>>;
    let keys: Awaited<ReturnType<typeof jose.generateKeyPair>>;
    let publicJwk: jose.JWK;
    before(async () => {
      server = await startServer({ db: kind });
      alice = await person(server, 'alice');
      keys = await jose.generateKeyPair('ES256', { extractable: true });
      publicJwk = { ...(await jose.exportJWK(keys.publicKey)), kid: 'rp-1', alg: 'ES256', use: 'sig' };
    });
    after(() => server.close());

    const signedIn = async () => {
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      return agent;
    };
    /** openid-client for a private_key_jwt client signing with the same key as its request objects. */
    const keyedParty = (clientId: string) => oidc.discovery(new URL(server.url), clientId, undefined, oidc.PrivateKeyJwt({ key: keys.privateKey, kid: 'rp-1' }), { execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] });
    const sign = (claims: Record<string, unknown>, key: jose.CryptoKey = keys.privateKey, kid = 'rp-1') =>
      new jose.SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'oauth-authz-req+jwt' }).sign(key);

    it('item 1: a form POST to either authorization path is an authorization request with the rules of GET', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile', trusted: true });
      const { challenge } = pkce();
      const params = { response_type: 'code', client_id: c.id, redirect_uri: REDIRECT, scope: 'openid', state: 'posted', code_challenge: challenge, code_challenge_method: 'S256' };
      for (const path of ['/oauth2', '/login/oauth/authorize']) {
        const agent = await signedIn();
        const res = await agent.post(path, params);
        assert.equal(res.status, 303, path);
        const back = new URL(res.headers.get('location')!);
        assert.equal(back.searchParams.get('state'), 'posted');
        assert.ok(back.searchParams.get('code'));
      }
      // Not signed in: to the login page, and back to the same request (as a GET) after it.
      const anon = new Agent(server.url);
      const res = await anon.post('/oauth2', { ...params, login_hint: 'alice' });
      assert.equal(res.status, 303);
      const login = new URL(res.headers.get('location')!, server.url);
      assert.equal(login.pathname, '/login');
      // login_hint fills the username field (OpenID Connect Core §3.1.2.1).
      const page = await anon.get(`${login.pathname}${login.search}`);
      assert.match(await page.text(), /name="username"[^>]*value="alice"/);
      const done = await anon.login(alice.username, alice.password, login.searchParams.get('return_to')!);
      const again = await anon.get(done.headers.get('location')!);
      assert.equal(again.status, 302);
      assert.equal(new URL(again.headers.get('location')!).searchParams.get('state'), 'posted');
      // The consent decision still works (a form with the consent CSRF field), and a bad one is still refused.
      const shy = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid' });
      const agent = await signedIn();
      const consent = await agent.post('/oauth2', { ...params, client_id: shy.id });
      assert.equal(consent.status, 200);
      const form = parseForm(await consent.text());
      assert.equal((await agent.post(form.action, { ...form.fields, csrf_token: 'forged', approve: 'true' })).status, 403);
      const approved = await agent.post(form.action, { ...form.fields, approve: 'true' });
      assert.equal(approved.status, 303);
      assert.ok(new URL(approved.headers.get('location')!).searchParams.get('code'));
    });

    it('item 2: discovery advertises request objects and the claims parameter', async () => {
      const meta = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.equal(meta.request_parameter_supported, true);
      assert.equal(meta.request_uri_parameter_supported, false);
      assert.equal(meta.claims_parameter_supported, true);
      for (const alg of ['none', 'ES256', 'RS256', 'PS256']) assert.ok((meta.request_object_signing_alg_values_supported as string[]).includes(alg), alg);
    });

    it('item 2: openid-client signs a request object (JAR); its parameters win over the URL, and the code flow completes', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile', trusted: true, authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [publicJwk] }) });
      const config = await keyedParty(c.id);
      const verifier = oidc.randomPKCECodeVerifier();
      const nonce = oidc.randomNonce();
      const url = await oidc.buildAuthorizationUrlWithJAR(config, {
        redirect_uri: REDIRECT, scope: 'openid', state: 'from-object', nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', response_type: 'code',
      }, { key: keys.privateKey, kid: 'rp-1' });
      assert.ok(url.searchParams.get('request'));
      // OpenID Connect Core §6.3.3: a state beside the object loses to the object's.
      url.searchParams.set('state', 'from-url');
      url.searchParams.set('response_type', 'code');
      const seen = await visit(await signedIn(), alice, url);
      assert.equal(seen.callback.searchParams.get('state'), 'from-object');
      const tokens = await oidc.authorizationCodeGrant(config, seen.callback, { pkceCodeVerifier: verifier, expectedState: 'from-object', expectedNonce: nonce, idTokenExpected: true });
      assert.equal(tokens.claims()!.sub, alice.id);
    });

    it('item 2: unsigned request objects for a client without keys; refused for one with keys, and bad objects answered at the redirect URI', async () => {
      const plain = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', trusted: true });
      const keyed = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', trusted: true, authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [publicJwk] }) });
      const { challenge } = pkce();
      const base = { response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' };
      const agent = await signedIn();
      const get = (q: Record<string, string>) => agent.get(`/oauth2?${new URLSearchParams(q)}`);
      const ok = await get({ client_id: plain.id, response_type: 'code', scope: 'openid', request: unsigned({ ...base, client_id: plain.id, state: 'inside' }) });
      assert.equal(ok.status, 302);
      const okBack = new URL(ok.headers.get('location')!);
      assert.equal(okBack.searchParams.get('state'), 'inside');
      assert.ok(okBack.searchParams.get('code'));

      const other = await jose.generateKeyPair('ES256');
      const now = Math.floor(Date.now() / 1000);
      const good = { ...base, client_id: keyed.id, iss: keyed.id, aud: server.url, exp: now + 60 };
      const refused: [string, string][] = [
        ['unsigned from a client with keys', unsigned({ ...base, client_id: keyed.id })],
        ['signed by another key', await sign(good, other.privateKey)],
        ['aud not the issuer', await sign({ ...good, aud: 'https://elsewhere.example' })],
        ['iss not the client', await sign({ ...good, iss: plain.id })],
        ['client_id not the one sent', await sign({ ...good, client_id: plain.id })],
        ['expired', await sign({ ...good, exp: now - 3600 })],
        ['not a JWT', 'eyJ.eyJ.sig'],
      ];
      for (const [why, request] of refused) {
        const res = await get({ client_id: keyed.id, response_type: 'code', scope: 'openid', redirect_uri: REDIRECT, state: 'outer', request });
        assert.equal(res.status, 302, why);
        const back = new URL(res.headers.get('location')!);
        assert.equal(`${back.origin}${back.pathname}`, REDIRECT, why);
        assert.equal(back.searchParams.get('error'), 'invalid_request_object', why);
        assert.equal(back.searchParams.get('state'), 'outer', why);
      }
      // The object names a redirect URI that is not registered: never a redirect there.
      const evil = await get({ client_id: keyed.id, response_type: 'code', scope: 'openid', request: await sign({ ...good, redirect_uri: 'https://evil.example/cb' }) });
      assert.equal(evil.status, 400);
      assert.equal(evil.headers.get('location'), null);
      // By reference: never fetched.
      const byRef = await get({ client_id: plain.id, response_type: 'code', scope: 'openid', request_uri: 'https://rp.example.test/request.jwt' });
      assert.equal(new URL(byRef.headers.get('location')!).searchParams.get('error'), 'request_uri_not_supported');
    });

    it('item 2: a signed request object pushed (RFC 9126 §3); an unsigned one is refused there', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', trusted: true, authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [publicJwk] }) });
      const config = await keyedParty(c.id);
      const push = async (request: string) => {
        try {
          const url = await oidc.buildAuthorizationUrlWithPAR(config, { request });
          return { status: 201, body: { request_uri: url.searchParams.get('request_uri')! } as Record<string, string> };
        } catch (e) {
          const err = e as { status?: number; error?: string };
          return { status: err.status ?? 0, body: { error: err.error ?? String(e) } as Record<string, string> };
        }
      };
      const { challenge } = pkce();
      const claims = { response_type: 'code', client_id: c.id, redirect_uri: REDIRECT, scope: 'openid', state: 'pushed-object', code_challenge: challenge, code_challenge_method: 'S256', iss: c.id, aud: server.url, exp: Math.floor(Date.now() / 1000) + 60 };
      const pushed = await push(await sign(claims));
      assert.equal(pushed.status, 201, JSON.stringify(pushed.body));
      const res = await (await signedIn()).get(`/oauth2?${new URLSearchParams({ client_id: c.id, request_uri: pushed.body.request_uri! })}`);
      assert.equal(res.status, 302);
      assert.equal(new URL(res.headers.get('location')!).searchParams.get('state'), 'pushed-object');
      const bad = await push(unsigned(claims));
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error, 'invalid_request_object');
    });

    it('item 5: the claims parameter releases the asked claims in UserInfo and the ID token, with consent; malformed is invalid_request', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile email' });
      const config = await relyingParty(server, c.id, c.secret);
      const verifier = oidc.randomPKCECodeVerifier();
      const claims = JSON.stringify({ userinfo: { email: { essential: true }, name: null }, id_token: { preferred_username: { essential: true } } });
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT, scope: 'openid', state: 's', claims,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      const agent = await signedIn();
      const page = await agent.get(`${url.pathname}${url.search}`);
      assert.equal(page.status, 200);
      const html = await page.text();
      // The person is asked for the scopes those claims are released under.
      assert.match(html, /email/i);
      const form = parseForm(html);
      const decision = await agent.post(form.action, { ...form.fields, approve: 'true' });
      const tokens = await oidc.authorizationCodeGrant(config, new URL(decision.headers.get('location')!), { pkceCodeVerifier: verifier, expectedState: 's', idTokenExpected: true });
      assert.equal(tokens.scope, 'openid');
      assert.equal(tokens.claims()!.preferred_username, 'alice');
      assert.equal(tokens.claims()!.email, undefined);
      const info = await oidc.fetchUserInfo(config, tokens.access_token, alice.id);
      assert.equal(info.email, alice.email);
      assert.equal(info.name, 'Alice Example');
      assert.equal(info.preferred_username, undefined);

      const bad = await agent.get(`/oauth2?${new URLSearchParams({ client_id: c.id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid', state: 'x', claims: '{"userinfo": [', code_challenge: pkce().challenge, code_challenge_method: 'S256' })}`);
      assert.equal(bad.status, 302);
      assert.equal(new URL(bad.headers.get('location')!).searchParams.get('error'), 'invalid_request');
    });
  });
}
