/**
 * Hostile input at the login and logout forms and at the admin HTTP API:
 * pages answer with an HTML page, the API with a JSON error, never a 500.
 * One line a case.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { signedIn } from '../helpers/people.js';
import { FORM, basic, expectErrorPage, expectOAuthError, formBody, type Fields } from '../security/support.js';

const long = (n: number) => 'x'.repeat(n);

describe('login and logout form input', () => {
  let server: TestServer;
  let agent: Agent;
  let csrf: string;
  before(async () => {
    server = await startServer();
    await server.createUser('frank');
    agent = new Agent(server.url);
    csrf = parseForm(await (await agent.get('/login')).text()).fields.csrf_token!;
  });
  after(() => server.close());

  type LoginCase = [name: string, body: () => { body: string | Uint8Array; type: string }, status: number];
  const form = (fields: Fields) => ({ body: formBody({ csrf_token: csrf, return_to: '/', ...fields }), type: FORM });
  const loginCases: LoginCase[] = [
    ['JSON instead of a form', () => ({ body: JSON.stringify({ csrf_token: csrf, username: 'frank', password: 'x' }), type: 'application/json' }), 400],
    ['malformed JSON', () => ({ body: '{"username"', type: 'application/json' }), 400],
    ['text/plain', () => ({ body: formBody({ csrf_token: csrf, username: 'frank', password: 'x' }), type: 'text/plain' }), 400],
    ['oversized form', () => form({ username: 'frank', password: long(70_000) }), 413],
    ['no CSRF token (RFC 6749 §10.12)', () => ({ body: formBody({ username: 'frank', password: 'x' }), type: FORM }), 403],
    ['wrong CSRF token', () => form({ csrf_token: 'forged', username: 'frank', password: 'x' }), 403],
    ['repeated CSRF token', () => form({ csrf_token: [csrf, csrf], username: 'frank', password: 'x' }), 403],
    ['missing username', () => form({ password: 'x' }), 400],
    ['missing password', () => form({ username: 'frank' }), 400],
    ['repeated username', () => form({ username: ['frank', 'frank'], password: 'x' }), 400],
    ['username over 256 characters', () => form({ username: long(300), password: 'x' }), 400],
    ['password over 1024 characters', () => form({ username: 'frank', password: long(2000) }), 400],
    ['NUL in the username', () => form({ username: 'frank\u0000', password: 'x' }), 400],
    ['percent-garbage username', () => ({ body: `csrf_token=${encodeURIComponent(csrf)}&username=%ZZ%E0%A4%A&password=x`, type: FORM }), 401],
    ['non-UTF-8 username', () => ({ body: Buffer.concat([Buffer.from(`csrf_token=${encodeURIComponent(csrf)}&password=x&username=`), Buffer.from([0xff, 0xc3, 0x28])]), type: FORM }), 401],
  ];
  for (const [name, build, status] of loginCases) {
    it(`POST /login: ${name} → page ${status}`, async () => {
      const { body, type } = build();
      await expectErrorPage(await agent.request('/login', { method: 'POST', headers: { 'content-type': type }, body }), status);
    });
  }

  const loginPages: [name: string, path: string, headers?: Record<string, string>][] = [
    ['repeated return_to', '/login?return_to=/a&return_to=/b'],
    ['return_to[] array syntax', '/login?return_to[]=/a'],
    ['very long return_to', `/login?return_to=/${long(6000)}`],
    ['percent-garbage return_to', '/login?return_to=%ZZ%E0%A4%A%FF'],
    ['oversized CSRF cookie', '/login', { cookie: `gh_csrf=${long(5000)}` }],
    ['garbage session cookie', '/', { cookie: 'gh_session=%ZZ%00; gh_csrf=%' }],
  ];
  for (const [name, path, headers] of loginPages) {
    it(`GET ${path.split('?')[0]}: ${name} → 200 page`, async () => {
      const res = await fetch(`${server.url}${path}`, { headers: headers ?? {}, redirect: 'manual' });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      await res.text();
    });
  }

  it('GET /login: NUL in return_to → error page 400', async () => {
    await expectErrorPage(await fetch(`${server.url}/login?return_to=/%00`), 400);
  });

  const logouts: [name: string, body: string, type: string, status: number][] = [
    ['empty form', '', FORM, 303],
    ['JSON', '{"return_to":"//evil.example"}', 'application/json', 303],
    ['text/plain', 'x', 'text/plain', 303],
    ['repeated return_to', formBody({ return_to: ['/a', '/b'] }), FORM, 303],
    ['malformed JSON', '{"x":', 'application/json', 400],
  ];
  for (const [name, body, type, status] of logouts) {
    it(`POST /logout signed out: ${name} → ${status}`, async () => {
      const res = await fetch(`${server.url}/logout`, { method: 'POST', headers: { 'content-type': type }, body, redirect: 'manual' });
      if (status !== 303) return void (await expectErrorPage(res, status));
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/');
    });
  }

  it('POST /logout signed in without a valid CSRF token → page 403, still signed in', async () => {
    const me = await signedIn(server, 'grace');
    for (const fields of [{}, { csrf_token: 'forged' }, { csrf_token: ['a', 'b'] }] as Fields[]) {
      await expectErrorPage(await me.post('/logout', fields as Record<string, string>), 403);
    }
    assert.match(await (await me.get('/')).text(), /signed in as <strong>grace<\/strong>/i);
  });
});

describe('admin API input', () => {
  const ADMIN = 'test-admin-token-0123456789abcdef';
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
  });
  after(() => server.close());

  type AdminCase = [name: string, method: string, path: string, body: string | undefined, status: number, error: string, headers?: Record<string, string>];
  const json = (v: unknown) => JSON.stringify(v);
  const client = (extra: Record<string, unknown>) => json({ client_name: 'App', redirect_uris: ['https://app.example/cb'], ...extra });
  const cases: AdminCase[] = [
    ['no credentials', 'GET', '/admin/clients', undefined, 401, 'invalid_token', { authorization: '' }],
    ['wrong token', 'GET', '/admin/clients', undefined, 401, 'invalid_token', { authorization: 'Bearer wrong' }],
    ['empty Bearer', 'GET', '/admin/clients', undefined, 401, 'invalid_token', { authorization: 'Bearer ' }],
    ['Basic instead of Bearer', 'GET', '/admin/clients', undefined, 401, 'invalid_token', { authorization: basic('admin', ADMIN) }],
    ['very long token', 'GET', '/admin/clients', undefined, 401, 'invalid_token', { authorization: `Bearer ${long(8000)}` }],
    ['text/plain body', 'POST', '/admin/clients', 'client_name=App', 400, 'invalid_request', { 'content-type': 'text/plain' }],
    ['malformed JSON', 'POST', '/admin/clients', '{"client_name":', 400, 'invalid_request'],
    ['empty JSON body', 'POST', '/admin/clients', '', 400, 'invalid_request'],
    ['JSON array body', 'POST', '/admin/clients', '[]', 400, 'invalid_request'],
    ['JSON null body', 'POST', '/admin/clients', 'null', 400, 'invalid_request'],
    ['JSON string body', 'POST', '/admin/clients', '"x"', 400, 'invalid_request'],
    ['no name', 'POST', '/admin/clients', json({ redirect_uris: ['https://app.example/cb'] }), 400, 'invalid_request'],
    ['name over 200 characters', 'POST', '/admin/clients', client({ client_name: long(201) }), 400, 'invalid_request'],
    ['name not a string', 'POST', '/admin/clients', client({ client_name: { $ne: 1 } }), 400, 'invalid_request'],
    ['NUL in the name', 'POST', '/admin/clients', client({ client_name: 'a\u0000b' }), 400, 'invalid_request'],
    ['redirect_uris not strings', 'POST', '/admin/clients', client({ redirect_uris: [1, 2] }), 400, 'invalid_request'],
    ['redirect URI not absolute', 'POST', '/admin/clients', client({ redirect_uris: ['/cb'] }), 400, 'invalid_request'],
    ['redirect URI over plain http', 'POST', '/admin/clients', client({ redirect_uris: ['http://app.example/cb'] }), 400, 'invalid_request'],
    ['redirect URI with a fragment', 'POST', '/admin/clients', client({ redirect_uris: ['https://app.example/cb#x'] }), 400, 'invalid_request'],
    ['redirect URI with credentials', 'POST', '/admin/clients', client({ redirect_uris: ['https://u:p@app.example/cb'] }), 400, 'invalid_request'],
    ['redirect URI with a line break', 'POST', '/admin/clients', client({ redirect_uris: ['https://app.example/c\r\nb'] }), 400, 'invalid_request'],
    ['redirect URI javascript:', 'POST', '/admin/clients', client({ redirect_uris: ['javascript:alert(1)'] }), 400, 'invalid_request'],
    ['no redirect URI for authorization_code', 'POST', '/admin/clients', client({ redirect_uris: [] }), 400, 'invalid_request'],
    ['unknown grant type', 'POST', '/admin/clients', client({ grant_types: ['magic'] }), 400, 'invalid_request'],
    ['grant_types not strings', 'POST', '/admin/clients', client({ grant_types: [true] }), 400, 'invalid_request'],
    ['unknown auth method', 'POST', '/admin/clients', client({ token_endpoint_auth_method: 'private_key_jwt' }), 400, 'invalid_request'],
    ['public client with client_credentials', 'POST', '/admin/clients', client({ public: true, grant_types: ['client_credentials'] }), 400, 'invalid_request'],
    ['flag not a boolean', 'POST', '/admin/clients', client({ trusted: 'yes' }), 400, 'invalid_request'],
    ['malformed scope', 'POST', '/admin/clients', client({ scope: 'a"b' }), 400, 'invalid_request'],
    ['unknown token format', 'POST', '/admin/clients', client({ token_format: 'saml' }), 400, 'invalid_request'],
    ['malformed domain', 'POST', '/admin/clients', client({ domain: 'https://%%%' }), 400, 'invalid_request'],
    ['redirect URI outside the bound domain', 'POST', '/admin/clients', client({ domain: 'other.example' }), 400, 'invalid_request'],
    ['oversized body', 'POST', '/admin/clients', client({ client_name: long(70_000) }), 413, 'invalid_request'],
    ['unknown client', 'GET', '/admin/clients/nope', undefined, 404, 'not_found'],
    ['very long client id', 'GET', `/admin/clients/${long(500)}`, undefined, 400, 'invalid_request'],
    ['undecodable client id', 'GET', '/admin/clients/%E0%A4%A', undefined, 400, 'invalid_request'],
    ['NUL client id', 'GET', '/admin/clients/%00', undefined, 400, 'invalid_request'],
    ['delete an unknown client', 'DELETE', '/admin/clients/nope', undefined, 404, 'not_found'],
    ['rotate the secret of an unknown client', 'POST', '/admin/clients/nope/secret', undefined, 404, 'not_found'],
    ['user without fields', 'POST', '/admin/users', '{}', 400, 'invalid_request'],
    ['user with an illegal username', 'POST', '/admin/users', json({ username: '../admin', email: 'a@b.example', password: 'long enough' }), 400, 'invalid_request'],
    ['user with a short password', 'POST', '/admin/users', json({ username: 'henry', email: 'a@b.example', password: 'short' }), 400, 'invalid_request'],
    ['user with a malformed email', 'POST', '/admin/users', json({ username: 'henry', email: 'no at sign', password: 'long enough' }), 400, 'invalid_request'],
    ['user fields of the wrong type', 'POST', '/admin/users', json({ username: ['henry'], email: 1, password: {} }), 400, 'invalid_request'],
    ['user body not an object', 'POST', '/admin/users', '[1]', 400, 'invalid_request'],
    ['key rotation with an empty JSON body', 'POST', '/admin/keys/rotate', '', 400, 'invalid_request'],
    ['a method the API does not have', 'PUT', '/admin/clients', '{}', 404, 'invalid_request'],
  ];
  for (const [name, method, path, body, status, error, headers] of cases) {
    it(`${method} ${path.slice(0, 40)}: ${name} → ${status} ${error}`, async () => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body } : {}),
      });
      if (status === 401) {
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
      }
      await expectOAuthError(res, status, error);
    });
  }

  it('a duplicate username is a 400, not a constraint failure', async () => {
    const make = () => fetch(`${server.url}/admin/users`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'ivy', email: 'ivy@example.test', password: 'long enough password' }),
    });
    assert.equal((await make()).status, 201);
    await expectOAuthError(await make(), 400, 'invalid_request');
  });

  it('is off without GATEHOUSE_ADMIN_TOKEN', async () => {
    const off = await startServer();
    try {
      await expectOAuthError(await fetch(`${off.url}/admin/clients`, { headers: { authorization: 'Bearer anything' } }), 401, 'invalid_token');
    } finally {
      await off.close();
    }
  });
});
