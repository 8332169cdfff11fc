import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { TestClock } from '../helpers/clock.js';
import { Agent } from '../helpers/agent.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';
import type { RegistrationStorage } from '../../src/core/oauth/registration-ports.js';

type Answer = { status: number; body: Record<string, unknown>; headers: Headers };

async function call(server: { url: string }, method: string, path: string, body?: unknown, auth?: string, contentType = 'application/json'): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = contentType;
  if (auth) headers.authorization = auth;
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {}, headers: res.headers };
}

const register = (server: { url: string }, body: unknown, auth?: string) => call(server, 'POST', '/oauth/register', body, auth);
const CODE_CLIENT = { redirect_uris: ['https://app.example.test/cb'], client_name: 'Registered app' };
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

async function token(server: { url: string }, params: Record<string, string>, auth?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth) headers.authorization = auth;
  const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers, body: new URLSearchParams(params) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** Every bad value of every field: [metadata, expected error]. */
const BAD: [string, unknown, string][] = [
  ['redirect_uris not an array', { redirect_uris: 'https://app.example.test/cb' }, 'invalid_redirect_uri'],
  ['redirect_uris of numbers', { redirect_uris: [1] }, 'invalid_redirect_uri'],
  ['relative redirect URI', { redirect_uris: ['/cb'] }, 'invalid_redirect_uri'],
  ['http redirect URI (not loopback)', { redirect_uris: ['http://app.example.test/cb'] }, 'invalid_redirect_uri'],
  ['redirect URI with a fragment', { redirect_uris: ['https://app.example.test/cb#x'] }, 'invalid_redirect_uri'],
  ['redirect URI with credentials', { redirect_uris: ['https://u:p@app.example.test/cb'] }, 'invalid_redirect_uri'],
  ['custom scheme not a reverse domain', { redirect_uris: ['myapp:/cb'] }, 'invalid_redirect_uri'],
  ['redirect URI with a space', { redirect_uris: ['https://app.example.test/c b'] }, 'invalid_redirect_uri'],
  ['code grant without redirect URIs', { client_name: 'x' }, 'invalid_redirect_uri'],
  ['21 redirect URIs', { redirect_uris: Array.from({ length: 21 }, (_, i) => `https://app.example.test/${i}`) }, 'invalid_redirect_uri'],
  ['unknown auth method', { ...CODE_CLIENT, token_endpoint_auth_method: 'tls_client_auth' }, 'invalid_client_metadata'],
  ['auth method not a string', { ...CODE_CLIENT, token_endpoint_auth_method: 7 }, 'invalid_client_metadata'],
  ['password grant', { ...CODE_CLIENT, grant_types: ['authorization_code', 'password'] }, 'invalid_client_metadata'],
  ['implicit grant', { ...CODE_CLIENT, grant_types: ['implicit'], response_types: ['token'] }, 'invalid_client_metadata'],
  ['unknown grant', { ...CODE_CLIENT, grant_types: ['urn:example:unknown'] }, 'invalid_client_metadata'],
  ['empty grant_types', { ...CODE_CLIENT, grant_types: [] }, 'invalid_client_metadata'],
  ['grant_types not an array', { ...CODE_CLIENT, grant_types: 'authorization_code' }, 'invalid_client_metadata'],
  ['code grant with response type token', { ...CODE_CLIENT, grant_types: ['authorization_code'], response_types: ['code', 'token'] }, 'invalid_client_metadata'],
  ['response type code without the code grant', { ...CODE_CLIENT, grant_types: ['client_credentials'], response_types: ['code'] }, 'invalid_client_metadata'],
  ['code grant without response type code', { ...CODE_CLIENT, grant_types: ['authorization_code'], response_types: [] }, 'invalid_client_metadata'],
  ['public client with client_credentials', { grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
  ['empty client_name', { ...CODE_CLIENT, client_name: ' ' }, 'invalid_client_metadata'],
  ['client_name too long', { ...CODE_CLIENT, client_name: 'x'.repeat(201) }, 'invalid_client_metadata'],
  ['client_name not a string', { ...CODE_CLIENT, client_name: { en: 'x' } }, 'invalid_client_metadata'],
  ['malformed scope', { ...CODE_CLIENT, scope: 'a "b' }, 'invalid_client_metadata'],
  ['empty scope', { ...CODE_CLIENT, scope: '   ' }, 'invalid_client_metadata'],
  ['contacts not e-mail addresses', { ...CODE_CLIENT, contacts: ['call me'] }, 'invalid_client_metadata'],
  ['contacts not an array', { ...CODE_CLIENT, contacts: 'a@example.test' }, 'invalid_client_metadata'],
  ['logo_uri over http', { ...CODE_CLIENT, logo_uri: 'http://app.example.test/logo.png' }, 'invalid_client_metadata'],
  ['client_uri relative', { ...CODE_CLIENT, client_uri: '/home' }, 'invalid_client_metadata'],
  ['policy_uri javascript:', { ...CODE_CLIENT, policy_uri: 'javascript:alert(1)' }, 'invalid_client_metadata'],
  ['tos_uri with credentials', { ...CODE_CLIENT, tos_uri: 'https://u:p@app.example.test/tos' }, 'invalid_client_metadata'],
  ['private_key_jwt without keys', { ...CODE_CLIENT, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
  ['private_key_jwt with both jwks and jwks_uri', { ...CODE_CLIENT, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'a', y: 'b' }] }, jwks_uri: 'https://app.example.test/jwks' }, 'invalid_client_metadata'],
  ['jwks with a broken key', { ...CODE_CLIENT, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'EC', crv: 'P-256', x: 'a', y: 'b' }] } }, 'invalid_client_metadata'],
  ['jwks not a JWK Set', { ...CODE_CLIENT, token_endpoint_auth_method: 'private_key_jwt', jwks: [1] }, 'invalid_client_metadata'],
  ['jwks_uri over http', { ...CODE_CLIENT, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'http://keys.example.test/jwks' }, 'invalid_client_metadata'],
  ['jwks for a secret client', { ...CODE_CLIENT, jwks_uri: 'https://keys.example.test/jwks' }, 'invalid_client_metadata'],
  ['the CIBA grant (operator-registered clients only)', { grant_types: ['urn:openid:params:grant-type:ciba'], scope: 'openid user' }, 'invalid_client_metadata'],
  ['the CIBA grant beside the code grant', { ...CODE_CLIENT, grant_types: ['authorization_code', 'urn:openid:params:grant-type:ciba'] }, 'invalid_client_metadata'],
  ['client_name of two lines', { ...CODE_CLIENT, client_name: 'Gatehouse\nURGENT: tap Approve' }, 'invalid_client_metadata'],
  ['client_name with a control character', { ...CODE_CLIENT, client_name: 'App\u0007' }, 'invalid_client_metadata'],
  ['client_name with a bidi override', { ...CODE_CLIENT, client_name: '\u202eppA' }, 'invalid_client_metadata'],
  ['client_name of 101 characters', { ...CODE_CLIENT, client_name: 'x'.repeat(101) }, 'invalid_client_metadata'],
  ['id token algorithm HS256', { ...CODE_CLIENT, id_token_signed_response_alg: 'HS256' }, 'invalid_client_metadata'],
  ['require_pushed_authorization_requests a string', { ...CODE_CLIENT, require_pushed_authorization_requests: 'yes' }, 'invalid_client_metadata'],
  ['post-logout URI over http', { ...CODE_CLIENT, post_logout_redirect_uris: ['http://app.example.test/bye'] }, 'invalid_client_metadata'],
  ['back-channel logout URI relative', { ...CODE_CLIENT, backchannel_logout_uri: '/logout' }, 'invalid_client_metadata'],
  ['client_id chosen by the client', { ...CODE_CLIENT, client_id: 'mine' }, 'invalid_client_metadata'],
  ['software_statement', { ...CODE_CLIENT, software_statement: 'eyJhbGciOiJub25lIn0.e30.' }, 'unapproved_software_statement'],
  ['an array body', [CODE_CLIENT], 'invalid_client_metadata'],
  ['a JSON string body', '"x"', 'invalid_client_metadata'],
  ['a JSON null body', 'null', 'invalid_client_metadata'],
];

for (const { kind, skip } of await databaseKinds()) {
  describe(`dynamic client registration, RFC 7591 and RFC 7592 (open, ${kind})`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_REGISTRATION: 'open' } });
    });
    after(async () => server?.close());

    it('advertises registration_endpoint in both discovery documents', async () => {
      for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration']) {
        const meta = (await (await fetch(`${server.url}${path}`)).json()) as Record<string, unknown>;
        assert.equal(meta.registration_endpoint, `${server.url}/oauth/register`, path);
      }
    });

    it('registers a confidential client: 201, the secret once, a registration access token; never trusted; client.created recorded', async () => {
      const r = await register(server, { ...CODE_CLIENT, grant_types: ['authorization_code', 'refresh_token', 'client_credentials'], response_types: ['code'],
        scope: 'user email', contacts: ['ops@example.test'], logo_uri: 'https://app.example.test/logo.png', tos_uri: 'https://app.example.test/tos', software_id: 'app-1', unknown_field: 'ignored' });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.headers.get('cache-control'), 'no-store');
      const b = r.body;
      assert.match(String(b.client_id), /^[\w-]{16,}$/);
      assert.ok(typeof b.client_secret === 'string' && b.client_secret.length >= 32);
      assert.equal(b.client_secret_expires_at, 0);
      assert.equal(typeof b.client_id_issued_at, 'number');
      assert.equal(b.token_endpoint_auth_method, 'client_secret_basic');
      assert.deepEqual(b.grant_types, ['authorization_code', 'refresh_token', 'client_credentials']);
      assert.deepEqual(b.response_types, ['code']);
      assert.deepEqual(b.contacts, ['ops@example.test']);
      assert.equal(b.software_id, 'app-1');
      assert.equal(b.unknown_field, undefined);
      assert.equal(b.registration_client_uri, `${server.url}/oauth/register/${String(b.client_id)}`);
      assert.ok(typeof b.registration_access_token === 'string');
      const client = await server.gh.storage.clients.get(String(b.client_id));
      assert.equal(client?.trusted, false);
      // Stored as hashes only.
      assert.notEqual(client?.secretHash, b.client_secret);
      const reg = await (server.gh.registration as unknown as { deps: { storage: RegistrationStorage } }).deps.storage.registrations.get(String(b.client_id));
      assert.ok(reg && reg.tokenHash !== b.registration_access_token);
      const events = await server.gh.storage.events.list({ type: 'client.created', limit: 100 });
      assert.ok(events.some((e) => (e.data as { client_id: string }).client_id === b.client_id));
      // The client works at once.
      const t = await token(server, { grant_type: 'client_credentials', scope: 'user' }, basic(String(b.client_id), String(b.client_secret)));
      assert.equal(t.status, 200, JSON.stringify(t.body));
    });

    it('defaults: authorization_code and code, client_secret_basic, scope user and the OpenID scopes, RS256 ID tokens, a name from the redirect URI', async () => {
      const r = await register(server, { redirect_uris: ['https://other.example.test/cb'] });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.deepEqual(r.body.grant_types, ['authorization_code']);
      assert.deepEqual(r.body.response_types, ['code']);
      assert.equal(r.body.token_endpoint_auth_method, 'client_secret_basic');
      assert.equal(r.body.scope, 'user openid profile email');
      assert.equal(r.body.id_token_signed_response_alg, 'RS256');
      assert.equal(r.body.client_name, 'other.example.test');
      // offline_access with the refresh grant (OpenID Connect Core §11).
      const refreshing = await register(server, { ...CODE_CLIENT, grant_types: ['authorization_code', 'refresh_token'] });
      assert.equal(refreshing.body.scope, 'user openid profile email offline_access');
    });

    it('OpenID Connect Dynamic Registration §2: without id_token_signed_response_alg the ID token is RS256, and a client without scope may ask for openid', async () => {
      const alice = await server.createUser(`alice${Date.now()}`);
      for (const [asked, alg] of [[undefined, 'RS256'], ['ES256', 'ES256'], ['RS256', 'RS256']] as const) {
        const r = await register(server, { redirect_uris: [REDIRECT], client_name: 'OIDC app', ...(asked ? { id_token_signed_response_alg: asked } : {}) });
        assert.equal(r.status, 201, JSON.stringify(r.body));
        assert.equal(r.body.id_token_signed_response_alg, alg);
        const id = String(r.body.client_id);
        const { code, verifier } = await issueCode(new Agent(server.url), id, { scope: 'openid profile email', nonce: 'n' }, { user: alice });
        const t = await token(server, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT }, basic(id, String(r.body.client_secret)));
        assert.equal(t.status, 200, JSON.stringify(t.body));
        const header = JSON.parse(Buffer.from(String(t.body.id_token).split('.')[0]!, 'base64url').toString()) as { alg: string };
        assert.equal(header.alg, alg, `asked ${String(asked)}`);
        // RFC 7592 read states it too.
        const read = await call(server, 'GET', `/oauth/register/${id}`, undefined, `Bearer ${String(r.body.registration_access_token)}`);
        assert.equal(read.body.id_token_signed_response_alg, alg);
      }
    });

    it('a public client (none) gets no secret and no client_secret_expires_at', async () => {
      const r = await register(server, { ...CODE_CLIENT, token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/cb', 'com.example.app:/cb'] });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.client_secret, undefined);
      assert.equal(r.body.client_secret_expires_at, undefined);
    });

    it('private_key_jwt with inline jwks or a jwks_uri', async () => {
      const { generateKeyPairSync } = await import('node:crypto');
      const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
      const inline = await register(server, { ...CODE_CLIENT, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...jwk, kid: 'k1' }] } });
      assert.equal(inline.status, 201, JSON.stringify(inline.body));
      assert.equal(inline.body.client_secret, undefined);
      assert.equal((inline.body.jwks as { keys: unknown[] }).keys.length, 1);
      const byUri = await register(server, { ...CODE_CLIENT, token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://keys.example.test/jwks.json' });
      assert.equal(byUri.status, 201, JSON.stringify(byUri.body));
      assert.equal(byUri.body.jwks_uri, 'https://keys.example.test/jwks.json');
    });

    it('every bad value: 400 with RFC 7591 §3.2.2 error, never a 5xx, nothing stored', async () => {
      const before = (await server.gh.storage.clients.list()).length;
      for (const [what, body, error] of BAD) {
        const r = await register(server, body);
        assert.equal(r.status, 400, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, error, `${what}: ${JSON.stringify(r.body)}`);
        assert.equal(typeof r.body.error_description, 'string', what);
      }
      for (const [what, raw, type] of [['malformed JSON', '{"redirect_uris":', 'application/json'], ['a form', 'redirect_uris=https://a.test/cb', 'application/x-www-form-urlencoded'], ['text', 'hi', 'text/plain']] as const) {
        const r = await call(server, 'POST', '/oauth/register', raw, undefined, type);
        assert.ok(r.status === 400 || r.status === 415, `${what}: ${r.status}`);
        assert.ok(['invalid_request', 'invalid_client_metadata'].includes(String(r.body.error)), `${what}: ${JSON.stringify(r.body)}`);
      }
      assert.equal((await server.gh.storage.clients.list()).length, before);
    });

    it('RFC 7592: read, update (a new registration access token), delete; wrong tokens are 401 with a Bearer challenge', async () => {
      const r = await register(server, { ...CODE_CLIENT, contacts: ['a@example.test'] });
      const id = String(r.body.client_id);
      const rat = String(r.body.registration_access_token);
      const path = `/oauth/register/${id}`;

      const read = await call(server, 'GET', path, undefined, `Bearer ${rat}`);
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.equal(read.body.client_id, id);
      assert.deepEqual(read.body.contacts, ['a@example.test']);
      assert.equal(read.body.client_secret, undefined, 'the secret is never shown again');

      for (const auth of [undefined, 'Bearer wrong', `Basic ${rat}`, `Bearer ${rat}x`]) {
        const bad = await call(server, 'GET', path, undefined, auth);
        assert.equal(bad.status, 401, `${auth}: ${bad.status}`);
        assert.match(bad.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
      // Another client's token opens nothing.
      const other = await register(server, CODE_CLIENT);
      assert.equal((await call(server, 'GET', path, undefined, `Bearer ${String(other.body.registration_access_token)}`)).status, 401);
      assert.equal((await call(server, 'GET', '/oauth/register/unknown', undefined, `Bearer ${rat}`)).status, 401);

      // Update: full replacement; bad values as at registration, nothing changed.
      const next = { client_id: id, redirect_uris: ['https://app.example.test/new'], client_name: 'Renamed', grant_types: ['authorization_code', 'refresh_token'] };
      for (const [body, error] of [
        [{ ...next, client_id: 'other' }, 'invalid_client_metadata'],
        [{ ...next, client_secret: 'wrong' }, 'invalid_client_metadata'],
        [{ ...next, token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
        [{ ...next, redirect_uris: ['http://evil.example.test/cb'] }, 'invalid_redirect_uri'],
      ] as const) {
        const bad = await call(server, 'PUT', path, body, `Bearer ${rat}`);
        assert.equal(bad.status, 400, JSON.stringify(bad.body));
        assert.equal(bad.body.error, error);
      }
      assert.equal((await server.gh.storage.clients.get(id))?.name, 'Registered app');
      const updated = await call(server, 'PUT', path, { ...next, client_secret: String(r.body.client_secret) }, `Bearer ${rat}`);
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      assert.equal(updated.body.client_name, 'Renamed');
      assert.deepEqual(updated.body.redirect_uris, ['https://app.example.test/new']);
      assert.equal(updated.body.contacts, undefined, 'left out: reset');
      const rat2 = String(updated.body.registration_access_token);
      assert.notEqual(rat2, rat);
      assert.equal((await call(server, 'GET', path, undefined, `Bearer ${rat}`)).status, 401, 'the old token was replaced');
      assert.equal((await server.gh.storage.clients.get(id))?.name, 'Renamed');

      const del = await call(server, 'DELETE', path, undefined, `Bearer ${rat2}`);
      assert.equal(del.status, 204);
      assert.equal(await server.gh.storage.clients.get(id), undefined);
      assert.equal((await call(server, 'GET', path, undefined, `Bearer ${rat2}`)).status, 401);
    });

    it('CORS: a browser client may register (preflight and answer)', async () => {
      const pre = await fetch(`${server.url}/oauth/register`, { method: 'OPTIONS', headers: { origin: 'https://app.example.test', 'access-control-request-method': 'POST' } });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), '*');
    });
  });

  describe(`dynamic client registration: rate limit per address (${kind})`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_REGISTRATION: 'open' } });
    });
    after(async () => server?.close());

    it('30 registrations an hour per address, then 429 with Retry-After; refused metadata does not count', async () => {
      const before = (await server.gh.storage.clients.list()).length;
      for (let i = 0; i < 5; i++) assert.equal((await register(server, { client_name: 'no redirect' })).status, 400);
      for (let i = 0; i < 30; i++) assert.equal((await register(server, CODE_CLIENT)).status, 201, `registration ${i}`);
      const r = await register(server, CODE_CLIENT);
      assert.equal(r.status, 429);
      assert.ok(Number(r.headers.get('retry-after')) > 0);
      assert.equal((await server.gh.storage.clients.list()).length, before + 30);
    });
  });

  describe(`dynamic client registration with an initial access token (token, ${kind})`, { skip }, () => {
    const clock = new TestClock();
    const dir = mkdtempSync(join(tmpdir(), 'gh-dcr-'));
    const databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'gh.db')}` : freshDatabaseUrl('postgres');
    const env = { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: 'A'.repeat(43) + '=', GATEHOUSE_REGISTRATION: 'token' };
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind, env, clock });
    });
    after(async () => {
      await server?.close();
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });
    const mint = async (...args: string[]) => {
      const r = await runCli(['registration', 'token', ...args, '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      return JSON.parse(r.stdout) as { token: string; expires_at: string; uses: number };
    };

    it('gatehouse registration token --json prints {token, expires_at}; bad flags exit non-zero', async () => {
      const t = await mint('--ttl', '600');
      assert.match(t.token, /^gh_iat_/);
      const ttl = Date.parse(t.expires_at) - Date.now();
      assert.ok(ttl > 590_000 && ttl <= 600_000, `${ttl}`);
      for (const bad of [['--ttl', '5'], ['--uses', '1001'], ['--nope']]) {
        const r = await runCli(['registration', 'token', ...bad, '--json'], env);
        assert.notEqual(r.code, 0, bad.join(' '));
        assert.equal(r.stdout, '');
      }
    });

    it('no token or a wrong one: 401 with a Bearer challenge, nothing stored; a token is single use by default', async () => {
      const before = (await server.gh.storage.clients.list()).length;
      const none = await register(server, CODE_CLIENT);
      assert.equal(none.status, 401);
      assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
      assert.equal((await register(server, CODE_CLIENT, 'Bearer gh_iat_wrong')).status, 401);
      assert.equal((await server.gh.storage.clients.list()).length, before);
      const { token: t } = await mint();
      // Bad metadata does not use it up.
      assert.equal((await register(server, { client_name: 'x' }, `Bearer ${t}`)).status, 400);
      assert.equal((await register(server, CODE_CLIENT, `Bearer ${t}`)).status, 201);
      assert.equal((await register(server, CODE_CLIENT, `Bearer ${t}`)).status, 401, 'used up');
    });

    it('--uses N: N registrations, however many race for them', async () => {
      const { token: t } = await mint('--uses', '2');
      const results = await Promise.all(Array.from({ length: 6 }, () => register(server, CODE_CLIENT, `Bearer ${t}`)));
      assert.deepEqual(results.map((r) => r.status).sort(), [201, 201, 401, 401, 401, 401]);
    });

    it('client create --resource and the token-exchange grant through the CLI (RFC 8707, RFC 8693)', async () => {
      const te = 'urn:ietf:params:oauth:grant-type:token-exchange';
      const r = await runCli(['client', 'create', '--name', 'RS', '--grant-types', `client_credentials,${te}`, '--resource', 'https://rs.example.test/', '--resource', 'https://two.example.test/', '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { client_id: string; client_secret: string; resources: string[]; grant_types: string[] };
      assert.deepEqual(out.resources, ['https://rs.example.test/', 'https://two.example.test/']);
      assert.deepEqual(out.grant_types, ['client_credentials', te]);
      const t = await token(server, { grant_type: 'client_credentials', resource: 'https://two.example.test/' }, basic(out.client_id, out.client_secret));
      assert.equal(t.status, 200, JSON.stringify(t.body));
      const bad = await runCli(['client', 'create', '--name', 'RS', '--grant-types', 'client_credentials', '--resource', 'https://rs.example.test/#frag', '--json'], env);
      assert.notEqual(bad.code, 0);
      assert.equal(bad.stdout, '');
      assert.match(bad.stderr, /fragment/);
    });

    it('an expired token is refused', async () => {
      const { token: t } = await mint('--ttl', '60');
      // The CLI stamps tokens with the real time; the server's clock catches up, then passes the expiry.
      clock.advance(Date.now() - clock.now() + 61_000);
      assert.equal((await register(server, CODE_CLIENT, `Bearer ${t}`)).status, 401);
    });
  });

  describe(`dynamic client registration is off by default (${kind})`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind });
    });
    after(async () => server?.close());

    it('no endpoint, nothing advertised', async () => {
      assert.equal((await register(server, CODE_CLIENT)).status, 404);
      const meta = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.equal(meta.registration_endpoint, undefined);
    });
  });
}
