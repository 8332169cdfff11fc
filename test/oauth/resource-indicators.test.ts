import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { authorize, issueCode, pkce, REDIRECT } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const CALENDAR = 'https://calendar.example.test/';
const ADMIN = 'admin-token-for-resources';
const payloadOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
const basic = (c: { id: string; secret?: string | undefined }) => `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;

type Answer = { status: number; body: Record<string, unknown> };

async function token(server: { url: string }, client: { id: string; secret?: string | undefined }, params: Record<string, string | string[]>): Promise<Answer> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client) }, body: form });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Malformed, unknown or not allowed resources (RFC 8707 §2): each is invalid_target. */
const BAD_RESOURCES: [string, string | string[]][] = [
  ['unknown', 'https://elsewhere.example.test/'],
  ['relative', '/api'],
  ['not a URI', 'calendar'],
  ['with a fragment', `${CALENDAR}#x`],
  ['with credentials', 'https://u:p@calendar.example.test/'],
  ['with a space', 'https://calendar.example.test/a b'],
  ['empty', ''],
  ['eleven of them', Array.from({ length: 11 }, () => CALENDAR)],
  ['one good, one unknown', [CALENDAR, 'https://elsewhere.example.test/']],
];

for (const { kind, skip } of await databaseKinds()) {
  describe(`resource indicators, RFC 8707 (${kind})`, { skip }, () => {
    let server: TestServer;
    let jwtClient: { id: string; secret: string | undefined };
    let opaqueClient: { id: string; secret: string | undefined };
    let introspector: { id: string; secret: string | undefined };
    let alice: { username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
      const grants = ['authorization_code', 'refresh_token', 'client_credentials'];
      jwtClient = await server.createClient({ grantTypes: grants, scope: 'user', resources: [CALENDAR] });
      opaqueClient = await server.createClient({ grantTypes: grants, scope: 'user', resources: [CALENDAR], tokenFormat: 'opaque' });
      introspector = await server.createClient({ grantTypes: ['client_credentials'], introspect: true });
      alice = await server.createUser('alice');
    });
    after(async () => server?.close());

    const introspect = async (t: string) => {
      const res = await fetch(`${server.url}/oauth/check_token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(introspector) }, body: new URLSearchParams({ token: t }) });
      return (await res.json()) as Record<string, unknown>;
    };

    it('client_credentials: resource sets aud (JWT and introspection); normalised URIs match; several give an array; none gives the API', async () => {
      const none = await token(server, jwtClient, { grant_type: 'client_credentials' });
      assert.equal(payloadOf(String(none.body.access_token)).aud, server.apiUrl);
      const one = await token(server, jwtClient, { grant_type: 'client_credentials', resource: 'https://calendar.example.test' });
      assert.equal(one.status, 200, JSON.stringify(one.body));
      assert.equal(payloadOf(String(one.body.access_token)).aud, CALENDAR);
      assert.equal((await introspect(String(one.body.access_token))).aud, CALENDAR);
      const two = await token(server, jwtClient, { grant_type: 'client_credentials', resource: [CALENDAR, server.apiUrl] });
      assert.deepEqual(payloadOf(String(two.body.access_token)).aud, [CALENDAR, server.apiUrl]);
      // Opaque tokens keep their audience for introspection.
      const opaque = await token(server, opaqueClient, { grant_type: 'client_credentials', resource: CALENDAR });
      assert.equal((await introspect(String(opaque.body.access_token))).aud, CALENDAR);
      const opaqueDefault = await token(server, opaqueClient, { grant_type: 'client_credentials' });
      assert.equal((await introspect(String(opaqueDefault.body.access_token))).aud, server.apiUrl);
    });

    it('a token for another resource is refused by {api_url}', async () => {
      const cal = await token(server, jwtClient, { grant_type: 'client_credentials', resource: CALENDAR, scope: 'user' });
      const res = await fetch(`${server.apiUrl}/user`, { headers: { authorization: `Bearer ${String(cal.body.access_token)}` } });
      assert.equal(res.status, 401);
    });

    it('every bad resource at the token endpoint: 400 invalid_target, no token', async () => {
      for (const [what, resource] of BAD_RESOURCES) {
        for (const c of [jwtClient, opaqueClient]) {
          const r = await token(server, c, { grant_type: 'client_credentials', resource });
          assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.body)}`);
          assert.equal(r.body.error, 'invalid_target', what);
          assert.equal(r.body.access_token, undefined);
        }
      }
      // A client without registered resources may ask only for the API.
      const plain = await server.createClient({ grantTypes: ['client_credentials'] });
      assert.equal((await token(server, plain, { grant_type: 'client_credentials', resource: CALENDAR })).body.error, 'invalid_target');
    });

    it('code flow: the authorization request\'s resources apply to the grant; a token request may narrow, never widen (refresh too)', async () => {
      const agent = new Agent(server.url);
      const { code, verifier } = await issueCode(agent, jwtClient.id, { resource: CALENDAR, scope: 'user' }, { user: alice });
      // Not part of the grant: refused (the code stays unusable either way).
      const wider = await token(server, jwtClient, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, resource: server.apiUrl });
      assert.equal(wider.body.error, 'invalid_target');

      const second = await issueCode(agent, jwtClient.id, { resource: CALENDAR, scope: 'user' }, { user: alice });
      const t = await token(server, jwtClient, { grant_type: 'authorization_code', code: second.code, code_verifier: second.verifier, redirect_uri: REDIRECT });
      assert.equal(t.status, 200, JSON.stringify(t.body));
      assert.equal(payloadOf(String(t.body.access_token)).aud, CALENDAR);
      const refreshed = await token(server, jwtClient, { grant_type: 'refresh_token', refresh_token: String(t.body.refresh_token) });
      assert.equal(payloadOf(String(refreshed.body.access_token)).aud, CALENDAR);
      const widened = await token(server, jwtClient, { grant_type: 'refresh_token', refresh_token: String(refreshed.body.refresh_token), resource: server.apiUrl });
      assert.equal(widened.status, 400);
      assert.equal(widened.body.error, 'invalid_target');
      const malformed = await token(server, jwtClient, { grant_type: 'refresh_token', refresh_token: String(refreshed.body.refresh_token), resource: 'nope' });
      assert.equal(malformed.body.error, 'invalid_target');

      // Without resources in the authorization request: any allowed resource at the token endpoint.
      const third = await issueCode(agent, jwtClient.id, { scope: 'user' }, { user: alice });
      const forCal = await token(server, jwtClient, { grant_type: 'authorization_code', code: third.code, code_verifier: third.verifier, redirect_uri: REDIRECT, resource: CALENDAR });
      assert.equal(payloadOf(String(forCal.body.access_token)).aud, CALENDAR);
    });

    it('at the authorization endpoint a bad resource is invalid_target at the redirect URI', async () => {
      const agent = new Agent(server.url);
      for (const [what, resource] of BAD_RESOURCES) {
        const { challenge } = pkce();
        const params = new URLSearchParams({ response_type: 'code', client_id: jwtClient.id, redirect_uri: REDIRECT, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
        for (const r of Array.isArray(resource) ? resource : [resource]) params.append('resource', r);
        const back = await authorize(agent, new URL(`${server.url}/oauth2?${params}`), { user: alice });
        assert.equal(back.searchParams.get('error'), 'invalid_target', `${what}: ${back}`);
        assert.equal(back.searchParams.get('state'), 's');
      }
    });

    it('a pushed authorization request keeps its resources', async () => {
      const { challenge, verifier } = pkce();
      const pushed = await fetch(`${server.url}/oauth/par`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(jwtClient) },
        body: new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT, state: 's', code_challenge: challenge, code_challenge_method: 'S256', resource: CALENDAR }),
      });
      assert.equal(pushed.status, 201);
      const { request_uri } = (await pushed.json()) as { request_uri: string };
      const back = await authorize(new Agent(server.url), new URL(`${server.url}/oauth2?${new URLSearchParams({ client_id: jwtClient.id, request_uri })}`), { user: alice });
      const t = await token(server, jwtClient, { grant_type: 'authorization_code', code: back.searchParams.get('code')!, code_verifier: verifier, redirect_uri: REDIRECT });
      assert.equal(payloadOf(String(t.body.access_token)).aud, CALENDAR);
      // A bad resource is refused when pushed, before any request_uri exists.
      const bad = await fetch(`${server.url}/oauth/par`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(jwtClient) },
        body: new URLSearchParams({ response_type: 'code', redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource: 'https://elsewhere.example.test/' }),
      });
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { error: string }).error, 'invalid_target');
    });

    it('the admin API registers resources; bad ones are refused', async () => {
      const post = (body: unknown) => fetch(`${server.url}/admin/clients`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const ok = await post({ client_name: 'API', grant_types: ['client_credentials'], resources: [CALENDAR] });
      assert.equal(ok.status, 201);
      assert.deepEqual(((await ok.json()) as { resources: string[] }).resources, [CALENDAR]);
      for (const resources of [['/relative'], [`${CALENDAR}#f`], 'not-a-uri', [7]]) {
        const bad = await post({ client_name: 'API', grant_types: ['client_credentials'], resources });
        assert.equal(bad.status, 400, JSON.stringify(resources));
        assert.equal(((await bad.json()) as { error: string }).error, 'invalid_request');
      }
    });

    it('the consent page carries several resources through the decision', async () => {
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      const { challenge } = pkce();
      const fresh = await server.createClient({ scope: 'user', resources: [CALENDAR] });
      const params = new URLSearchParams({ response_type: 'code', client_id: fresh.id, redirect_uri: REDIRECT, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
      params.append('resource', CALENDAR);
      params.append('resource', server.apiUrl);
      const page = await agent.get(`/oauth2?${params}`);
      const html = await page.text();
      assert.equal(page.status, 200, `${page.status} ${page.headers.get('location')} ${html.slice(0, 200)}`);
      assert.equal([...html.matchAll(/name="resource"/g)].length, 2);
    });
  });
}
