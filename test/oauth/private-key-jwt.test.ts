import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as jose from 'jose';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { loopback, sendFrom, serveProcess, type Node } from '../helpers/processes.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT } from '../helpers/authorize.js';

const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const insecure = { [oauth.allowInsecureRequests]: true } as const;

async function keyPair(alg = 'ES256', kid = randomUUID()) {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { privateKey, jwk, kid, alg };
}
type Pair = Awaited<ReturnType<typeof keyPair>>;

/** A client assertion, with every claim overridable (RFC 7523 §3). */
async function assertion(server: { url: string }, clientId: string, key: Pair, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new jose.SignJWT({ iss: clientId, sub: clientId, aud: server.url, jti: randomUUID(), iat: now, exp: now + 60, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header }).sign(key.privateKey);
}

let source = 0;
/**
 * A token request from an address of its own (127.2.x.y): wrong client credentials are throttled per
 * address (docs/security.md), and these tests make many on purpose.
 */
async function tokenRequest(server: { url: string }, params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await sendFrom(loopback(source++, 2), server.url, '/oauth/token', { form: params, headers });
  return { status: res.status, body: JSON.parse(res.body) as Record<string, string> };
}
const cc = (clientId: string | undefined, a: string) => ({ grant_type: 'client_credentials', client_assertion_type: JWT_BEARER, client_assertion: a, ...(clientId ? { client_id: clientId } : {}) });

for (const { kind, skip } of await databaseKinds()) {
  describe(`private_key_jwt client authentication, RFC 7523 (${kind})`, { skip }, () => {
    let server: TestServer;
    let jwksServer: Server;
    let jwksUrl: string;
    let published: { keys: object[] } = { keys: [] };
    let jwksFetches = 0;
    before(async () => {
      // The client's jwks_uri is on loopback.
      server = await startServer({ db: kind, env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', GATEHOUSE_ADMIN_TOKEN: 'admin-token-for-tests-0123456789' } });
      jwksServer = createServer((_req, res) => {
        jwksFetches++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(published));
      });
      await new Promise<void>((r) => jwksServer.listen(0, '127.0.0.1', r));
      jwksUrl = `http://127.0.0.1:${(jwksServer.address() as AddressInfo).port}/jwks`;
    });
    after(async () => {
      jwksServer.closeAllConnections();
      await new Promise((r) => jwksServer.close(r));
      await server.close();
    });

    it('metadata lists private_key_jwt and the accepted (asymmetric) algorithms', async () => {
      const meta = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, string[]>;
      assert.ok(meta.token_endpoint_auth_methods_supported!.includes('private_key_jwt'));
      assert.ok(meta.token_endpoint_auth_methods_supported!.includes('client_secret_jwt'));
      assert.deepEqual(meta.token_endpoint_auth_signing_alg_values_supported, ['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA', 'Ed25519', 'HS256', 'HS384', 'HS512']);
    });

    it('openid-client: client_credentials with PrivateKeyJwt and a registered jwks; the client has no secret', async () => {
      const key = await keyPair('ES256');
      const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [key.jwk] }) });
      assert.equal(c.secret, undefined);
      const config = await oidc.discovery(new URL(server.url), c.id, {}, oidc.PrivateKeyJwt({ key: key.privateKey, kid: key.kid }), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] });
      const tokens = await oidc.clientCredentialsGrant(config, { scope: 'read' });
      assert.equal(tokens.scope, 'read');
      // RS256 and EdDSA keys too.
      for (const alg of ['RS256', 'EdDSA']) {
        const k = await keyPair(alg);
        const c2 = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [k.jwk] }) });
        const r = await tokenRequest(server, cc(c2.id, await assertion(server, c2.id, k)));
        assert.equal(r.status, 200, `${alg}: ${JSON.stringify(r.body)}`);
      }
    });

    it('oauth4webapi in one flow: PAR + PKCE + private_key_jwt (assertions at the PAR and token endpoints), jwks_uri fetched once and refetched for a new kid', async () => {
      const first = await keyPair('ES256');
      published = { keys: [first.jwk] };
      jwksFetches = 0;
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true, requirePar: true, authMethod: 'private_key_jwt', jwksUri: jwksUrl });
      const as = await oauth.processDiscoveryResponse(new URL(server.url), await oauth.discoveryRequest(new URL(server.url), { algorithm: 'oauth2', ...insecure }));
      const client: oauth.Client = { client_id: c.id };
      const auth = oauth.PrivateKeyJwt({ key: first.privateKey, kid: first.kid });
      const verifier = oauth.generateRandomCodeVerifier();
      const pushed = await oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, auth, {
        redirect_uri: REDIRECT, response_type: 'code', scope: 'user', state: 'st', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      }, insecure));
      const user = await server.createUser('carol');
      const agent = new Agent(server.url);
      await agent.login(user.username, user.password);
      const res = await agent.get(`/oauth2?${new URLSearchParams({ client_id: c.id, request_uri: pushed.request_uri })}`);
      assert.equal(res.status, 302);
      const params = oauth.validateAuthResponse(as, client, new URL(res.headers.get('location')!), 'st');
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, await oauth.authorizationCodeGrantRequest(as, client, auth, params, REDIRECT, verifier, insecure));
      assert.equal(tokens.scope, 'user');
      assert.equal(jwksFetches, 1, 'the key set is cached');

      // The client rotates: a new kid makes the server fetch the set again.
      const second = await keyPair('ES256');
      published = { keys: [first.jwk, second.jwk] };
      await new Promise((r) => setTimeout(r, 1100)); // the refetch cooldown
      const r = await tokenRequest(server, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: c.id, client_assertion_type: JWT_BEARER, client_assertion: await assertion(server, c.id, second) });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(jwksFetches, 2);
      // An unknown kid is refused, and cannot make the server fetch more than once a second.
      const stranger = await keyPair('ES256');
      const before = jwksFetches;
      for (let i = 0; i < 5; i++) assert.equal((await tokenRequest(server, cc(c.id, await assertion(server, c.id, stranger)))).status, 401);
      assert.ok(jwksFetches - before <= 1, `fetches: ${jwksFetches - before}`);
    });

    it('an assertion is single-use (jti), and aud, exp, iss/sub, signature and algorithm are checked: 401 invalid_client', async () => {
      const key = await keyPair('ES256');
      const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [key.jwk] }) });
      const a = await assertion(server, c.id, key);
      assert.equal((await tokenRequest(server, cc(c.id, a))).status, 200);
      const replay = await tokenRequest(server, cc(c.id, a));
      assert.equal(replay.status, 401);
      assert.equal(replay.body.error, 'invalid_client');

      const other = await keyPair('ES256', key.kid);
      const now = Math.floor(Date.now() / 1000);
      const hs = (id: string) => new jose.SignJWT({ iss: id, sub: id, aud: server.url, jti: randomUUID(), exp: now + 60 }).setProtectedHeader({ alg: 'HS256', kid: key.kid }).sign(new TextEncoder().encode(JSON.stringify(key.jwk)));
      const none = (id: string) => `${Buffer.from(JSON.stringify({ alg: 'none', kid: key.kid })).toString('base64url')}.${Buffer.from(JSON.stringify({ iss: id, sub: id, aud: server.url, jti: 'x', exp: now + 60 })).toString('base64url')}.`;
      const bad: [string, (id: string) => Promise<string> | string][] = [
        ['audience of someone else', (id) => assertion(server, id, key, { aud: 'https://other.example' })],
        ['the token endpoint of someone else', (id) => assertion(server, id, key, { aud: 'https://other.example/oauth/token' })],
        ['expired', (id) => assertion(server, id, key, { exp: now - 120 })],
        ['exp an hour away', (id) => assertion(server, id, key, { exp: now + 3600 })],
        ['no exp', (id) => assertion(server, id, key, { exp: undefined })],
        ['no jti', (id) => assertion(server, id, key, { jti: undefined })],
        ['empty jti', (id) => assertion(server, id, key, { jti: '' })],
        ['numeric jti', (id) => assertion(server, id, key, { jti: 42 })],
        ['not yet valid', (id) => assertion(server, id, key, { nbf: now + 600 })],
        ['another key with the same kid', (id) => assertion(server, id, other)],
        ['HS256 keyed with the public JWK', hs],
        ['alg none', none],
        ['sub is not the client', (id) => assertion(server, id, key, { sub: 'someone' })],
        ['not a JWT', () => 'not-a-jwt'],
        ['a huge value', () => 'a'.repeat(20000)],
      ];
      for (const [what, make] of bad) {
        // Failures lock a client after five (docs/security.md): each case on a client of its own.
        const fresh = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [key.jwk] }) });
        const r = await tokenRequest(server, cc(fresh.id, await make(fresh.id)));
        assert.ok(r.status === 401 || r.status === 400, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, r.status === 401 ? 'invalid_client' : 'invalid_request', what);
      }
      // iss and sub must both be this client, and client_id (when sent) must match.
      const otherId = await tokenRequest(server, cc('someone-else', await assertion(server, c.id, key)));
      assert.equal(otherId.status, 401);
      // Without client_id the assertion names the client.
      assert.equal((await tokenRequest(server, cc(undefined, await assertion(server, c.id, key)))).status, 200);
      // The token endpoint URL as audience (OpenID Connect Core §9) is accepted as well as the issuer.
      assert.equal((await tokenRequest(server, cc(c.id, await assertion(server, c.id, key, { aud: `${server.url}/oauth/token` })))).status, 200);
    });

    it('bad client_assertion_type, missing assertion, mixed methods: 400 invalid_request; a client of another method: 401', async () => {
      const key = await keyPair('ES256');
      const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [key.jwk] }) });
      const a = await assertion(server, c.id, key);
      const cases: [Record<string, string>, Record<string, string>, number, string][] = [
        [{ ...cc(c.id, a), client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer' }, {}, 400, 'invalid_request'],
        [{ ...cc(c.id, a), client_assertion_type: '' }, {}, 400, 'invalid_request'],
        [{ grant_type: 'client_credentials', client_id: c.id, client_assertion: a }, {}, 400, 'invalid_request'],
        [{ grant_type: 'client_credentials', client_id: c.id, client_assertion_type: JWT_BEARER }, {}, 400, 'invalid_request'],
        [{ ...cc(c.id, a), client_assertion: '' }, {}, 400, 'invalid_request'],
        [{ ...cc(c.id, a), client_secret: 'x' }, {}, 400, 'invalid_request'],
        [cc(c.id, a), { authorization: `Basic ${Buffer.from(`${c.id}:x`).toString('base64')}` }, 400, 'invalid_request'],
      ];
      for (const [params, headers, status, error] of cases) {
        const r = await tokenRequest(server, params, headers);
        assert.equal(r.status, status, `${JSON.stringify(params)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, error);
      }
      const repeated = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `${new URLSearchParams(cc(c.id, a))}&client_assertion=${a}` });
      assert.equal(repeated.status, 400);
      // A client registered for secrets cannot switch to assertions.
      const secretClient = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read' });
      const r = await tokenRequest(server, cc(secretClient.id, await assertion(server, secretClient.id, key)));
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'invalid_client');
      // And a private_key_jwt client cannot use a secret or nothing.
      assert.equal((await tokenRequest(server, { grant_type: 'client_credentials', client_id: c.id })).status, 401);
    });

    it('client_secret_jwt: an HMAC assertion keyed with the client secret (openid-client ClientSecretJwt); single-use; the secret is stored sealed', async () => {
      const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', authMethod: 'client_secret_jwt' });
      assert.ok(c.secret);
      const config = await oidc.discovery(new URL(server.url), c.id, {}, oidc.ClientSecretJwt(c.secret!), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] });
      assert.equal((await oidc.clientCredentialsGrant(config, { scope: 'read' })).scope, 'read');
      const now = Math.floor(Date.now() / 1000);
      const mac = (secret: string, claims: Record<string, unknown> = {}, alg = 'HS256', id = c.id) => new jose.SignJWT({ iss: id, sub: id, aud: server.url, jti: randomUUID(), exp: now + 60, ...claims })
        .setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret));
      const once = await mac(c.secret!);
      assert.equal((await tokenRequest(server, cc(c.id, once))).status, 200);
      assert.equal((await tokenRequest(server, cc(c.id, once))).status, 401, 'replayed');
      assert.equal((await tokenRequest(server, cc(c.id, await mac(c.secret!, {}, 'HS512')))).status, 200);
      // A wrong secret, and an asymmetric assertion, are refused (each on a client of its own: five failures lock one).
      const wrong: ((id: string, secret: string) => Promise<string>)[] = [(id, secret) => mac(`${secret}x`, {}, 'HS256', id), async (id) => assertion(server, id, await keyPair('ES256'))];
      for (const make of wrong) {
        const d = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', authMethod: 'client_secret_jwt' });
        const r = await tokenRequest(server, cc(d.id, await make(d.id, d.secret!)));
        assert.equal(r.status, 401);
      }
      // The secret itself is not in the table, only its sealed form (and its hash).
      const db = (server.gh.storage as unknown as { database: { db: import('kysely').Kysely<{ clients: { id: string; jwt_secret: string | null } }> } }).database.db;
      const row = await db.selectFrom('clients').select('jwt_secret').where('id', '=', c.id).executeTakeFirstOrThrow();
      assert.ok(row.jwt_secret && !row.jwt_secret.includes(c.secret!) && row.jwt_secret.startsWith('v1.'), row.jwt_secret ?? 'null');
      // After a secret rotation the new secret keys the HMAC.
      const rotated = await fetch(`${server.url}/admin/clients/${c.id}/secret`, { method: 'POST', headers: { authorization: 'Bearer admin-token-for-tests-0123456789' } });
      const fresh = ((await rotated.json()) as { client_secret: string }).client_secret;
      await new Promise((r) => setTimeout(r, 2100)); // the client cache (2 s)
      assert.equal((await tokenRequest(server, cc(c.id, await mac(fresh)))).status, 200);
    });

    it('introspection and revocation take assertions too (a resource server authenticating with private_key_jwt)', async () => {
      const key = await keyPair('ES256');
      const rs = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', introspect: true, authMethod: 'private_key_jwt', jwks: JSON.stringify({ keys: [key.jwk] }) });
      const token = (await tokenRequest(server, cc(rs.id, await assertion(server, rs.id, key)))).body.access_token!;
      const call = async (path: string, extra: Record<string, string>) => {
        const res = await sendFrom(loopback(source++, 2), server.url, path, { form: { client_assertion_type: JWT_BEARER, ...extra } });
        return { status: res.status, body: res.body ? JSON.parse(res.body) as Record<string, unknown> : {} };
      };
      const active = await call('/oauth/check_token', { token, client_assertion: await assertion(server, rs.id, key, { aud: `${server.url}/oauth/check_token` }) });
      assert.equal(active.status, 200);
      assert.equal(active.body.active, true);
      assert.equal((await call('/oauth/revoke', { token, client_assertion: await assertion(server, rs.id, key) })).status, 200);
      const after = await call('/oauth/check_token', { token, client_assertion: await assertion(server, rs.id, key) });
      assert.equal(after.body.active, false);
      assert.equal((await call('/oauth/check_token', { token, client_assertion: 'garbage' })).status, 401);
    });

    it('registration: --jwks / --jwks-uri bad values are refused (admin API 400 invalid_request)', async () => {
      const { jwk } = await keyPair('ES256');
      const priv = await jose.exportJWK((await jose.generateKeyPair('ES256', { extractable: true })).privateKey);
      const post = (body: object) => fetch(`${server.url}/admin/clients`, {
        method: 'POST', headers: { authorization: 'Bearer admin-token-for-tests-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'pkjwt', grant_types: ['client_credentials'], token_endpoint_auth_method: 'private_key_jwt', ...body }),
      });
      const bad: object[] = [
        {},
        { jwks: { keys: [jwk] }, jwks_uri: 'https://keys.example/jwks' },
        { jwks: 'not json' },
        { jwks: { keys: [] } },
        { jwks: { nokeys: true } },
        { jwks: { keys: [priv] } },
        { jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } },
        { jwks: { keys: [{ ...jwk, use: 'enc' }] } },
        { jwks: { keys: [{ ...jwk, alg: 'HS256' }] } },
        { jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }] } },
        { jwks: { keys: [jwk, jwk] } },
        { jwks: 42 },
        { jwks: [jwk] },
        { jwks_uri: 'ftp://keys.example/jwks' },
        { jwks_uri: 'not a url' },
        { jwks_uri: 'https://user:pw@keys.example/jwks' },
        { jwks_uri: 42 },
        { token_endpoint_auth_method: 'client_secret_basic', jwks: { keys: [jwk] } },
        { token_endpoint_auth_method: 'client_secret_basic', jwks_uri: 'https://keys.example/jwks' },
      ];
      for (const body of bad) {
        const res = await post(body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(((await res.json()) as { error: string }).error, 'invalid_request', JSON.stringify(body));
      }
      const ok = await post({ jwks: { keys: [jwk] } });
      assert.equal(ok.status, 201);
      const created = (await ok.json()) as Record<string, unknown>;
      assert.equal(created.client_secret, undefined);
      assert.equal(created.token_endpoint_auth_method, 'private_key_jwt');
    });
  });
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`a client assertion is single-use across two processes (${kind})`, { skip }, () => {
    let a: Node;
    let b: Node;
    let dir: string;
    let databaseUrl: string;
    let env: Record<string, string>;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-pkjwt-'));
      databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'g.db')}` : freshDatabaseUrl('postgres');
      env = { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: randomBytes(32).toString('base64') };
      a = await serveProcess(env);
      b = await serveProcess(env);
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });

    it('the same assertion sent to both processes at once gets a token exactly once (gatehouse client create --jwks)', async () => {
      const key = await keyPair('ES256');
      // Each process is its own issuer (its own port): the assertion's aud names both.
      for (let round = 0; round < 3; round++) {
        // A client per round: the replays of a round count as failures, and five lock a client.
        const created = await runCli(['client', 'create', '--name', 'Batch', '--grant-types', 'client_credentials', '--scope', 'read', '--auth-method', 'private_key_jwt', '--jwks', JSON.stringify({ keys: [key.jwk] }), '--json'], env);
        assert.equal(created.code, 0, created.stderr);
        const client = JSON.parse(created.stdout) as { client_id: string; client_secret?: string };
        assert.equal(client.client_secret, undefined);
        const jti = randomUUID();
        const now = Math.floor(Date.now() / 1000);
        const token = await new jose.SignJWT({ iss: client.client_id, sub: client.client_id, aud: [a.url, b.url], jti, exp: now + 60 }).setProtectedHeader({ alg: 'ES256', kid: key.kid }).sign(key.privateKey);
        const answers = await Promise.all([a, b, a, b].map((n) => tokenRequest({ url: n.url }, cc(client.client_id, token))));
        assert.equal(answers.filter((r) => r.status === 200).length, 1, `round ${round}: ${answers.map((r) => r.status).join(',')}`);
        assert.equal(answers.filter((r) => r.status === 401 && r.body.error === 'invalid_client').length, 3);
      }
      const bad = await runCli(['client', 'create', '--name', 'Bad', '--grant-types', 'client_credentials', '--auth-method', 'private_key_jwt', '--jwks', '{"keys":[]}', '--json'], env);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /jwks must be a JWK Set with 1 to 20 keys/);
      const none = await runCli(['client', 'create', '--name', 'Bad', '--grant-types', 'client_credentials', '--auth-method', 'private_key_jwt', '--json'], env);
      assert.equal(none.code, 1);
      assert.match(none.stderr, /--jwks or --jwks-uri/);
    });
  });
}
