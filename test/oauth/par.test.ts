import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oauth from 'oauth4webapi';
import * as oidc from 'openid-client';
import { Agent, parseForm } from '../helpers/agent.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { serveProcess, type Node } from '../helpers/processes.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { TestClock } from '../helpers/clock.js';
import { REDIRECT } from '../helpers/authorize.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;

/** The person's part: sign in when asked, approve when the consent page comes; where the browser ends up. */
async function visit(agent: Agent, user: { username: string; password: string }, url: URL | string): Promise<{ status: number; location?: URL; body?: string; form?: ReturnType<typeof parseForm> }> {
  const u = new URL(url);
  let res = await agent.get(`${u.pathname}${u.search}`);
  if (res.status === 302 && new URL(res.headers.get('location')!, agent.base).pathname === '/login') {
    const signedIn = await agent.login(user.username, user.password, new URL(res.headers.get('location')!, agent.base).searchParams.get('return_to')!);
    assert.equal(signedIn.status, 303);
    res = await agent.get(signedIn.headers.get('location')!);
  }
  if (res.status === 200) {
    const form = parseForm(await res.text());
    return { status: 200, form };
  }
  if (res.status === 302 || res.status === 303) return { status: res.status, location: new URL(res.headers.get('location')!) };
  return { status: res.status, body: await res.text() };
}

async function push(server: { url: string }, client: { id: string; secret?: string | undefined }, params: Record<string, string>, auth?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  if (auth ?? client.secret) headers.authorization = auth ?? `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
  const res = await fetch(`${server.url}/oauth/par`, { method: 'POST', headers, body: new URLSearchParams(params) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

for (const { kind, skip } of await databaseKinds()) {
  describe(`pushed authorization requests, RFC 9126 (${kind})`, { skip }, () => {
    const clock = new TestClock();
    let server: TestServer;
    let alice: { id: string; username: string; password: string };
    before(async () => {
      server = await startServer({ db: kind, clock });
      alice = await server.createUser('alice');
    });
    after(() => server.close());

    it('metadata names the endpoint; deployments do not require PAR by default', async () => {
      const meta = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.equal(meta.pushed_authorization_request_endpoint, `${server.url}/oauth/par`);
      assert.equal(meta.require_pushed_authorization_requests, false);
      const oidcMeta = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.equal(oidcMeta.pushed_authorization_request_endpoint, `${server.url}/oauth/par`);
    });

    it('openid-client: PAR + PKCE + code flow for a client registered with --require-par; the front channel carries only client_id and request_uri', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile', requirePar: true });
      const config = await oidc.discovery(new URL(server.url), c.id, c.secret, oidc.ClientSecretBasic(), { execute: [oidc.allowInsecureRequests] });
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = await oidc.buildAuthorizationUrlWithPAR(config, {
        redirect_uri: REDIRECT, scope: 'openid profile', state, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      });
      assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri']);
      assert.match(url.searchParams.get('request_uri')!, /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
      const agent = new Agent(server.url);
      const page = await visit(agent, alice, url);
      assert.equal(page.status, 200, page.body);
      // The consent form carries the handle, not the request: nothing in it can change the request.
      assert.equal(page.form!.fields.request_uri, url.searchParams.get('request_uri'));
      assert.equal(page.form!.fields.code_challenge, undefined);
      assert.equal(page.form!.fields.redirect_uri, undefined);
      const decided = await agent.post(page.form!.action, { ...page.form!.fields, approve: 'true' });
      assert.equal(decided.status, 303);
      const callback = new URL(decided.headers.get('location')!);
      const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: true });
      assert.equal(tokens.claims()!.sub, alice.id);

      // Replays: the same decision form again, and the same link again, are refused with a page (never a redirect).
      const again = await agent.post(page.form!.action, { ...page.form!.fields, approve: 'true' });
      assert.equal(again.status, 400);
      assert.match(await again.text(), /request_uri is unknown, expired or already used/i);
      const link = await agent.get(`${url.pathname}${url.search}`);
      assert.equal(link.status, 400);

      // Without PAR the same client is refused, even with a valid request in the query.
      const direct = await agent.get(`/oauth2?${new URLSearchParams({ client_id: c.id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`);
      assert.equal(direct.status, 400);
      assert.match(await direct.text(), /must push its authorization requests/i);
    });

    it('oauth4webapi: pushedAuthorizationRequest with client_secret_post; a trusted client is answered at once and the handle is spent', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true, authMethod: 'client_secret_post' });
      const as = await oauth.processDiscoveryResponse(new URL(server.url), await oauth.discoveryRequest(new URL(server.url), { algorithm: 'oauth2', ...insecure }));
      const client: oauth.Client = { client_id: c.id };
      const verifier = oauth.generateRandomCodeVerifier();
      const res = await oauth.pushedAuthorizationRequest(as, client, oauth.ClientSecretPost(c.secret!), {
        redirect_uri: REDIRECT, response_type: 'code', scope: 'user', state: 's1', code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256',
      }, insecure);
      assert.equal(res.status, 201);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const pushed = await oauth.processPushedAuthorizationResponse(as, client, res);
      assert.equal(pushed.expires_in, 60);
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({ client_id: c.id, request_uri: pushed.request_uri, scope: 'admin', redirect_uri: 'https://evil.example/cb' }).toString();
      const agent = new Agent(server.url);
      const answered = await visit(agent, alice, url);
      assert.equal(answered.status, 302);
      // Parameters sent beside request_uri are ignored (RFC 9126 §4): the pushed redirect URI and scope hold.
      assert.equal(`${answered.location!.origin}${answered.location!.pathname}`, REDIRECT);
      const params = oauth.validateAuthResponse(as, client, answered.location!, 's1');
      const tokens = await oauth.processAuthorizationCodeResponse(as, client,
        await oauth.authorizationCodeGrantRequest(as, client, oauth.ClientSecretPost(c.secret!), params, REDIRECT, verifier, insecure));
      assert.equal(tokens.scope, 'user');
      assert.equal((await agent.get(`${url.pathname}${url.search}`)).status, 400);
    });

    it('request_uri expires after GATEHOUSE_PAR_TTL (default 60 s)', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true });
      const p = await push(server, c, { response_type: 'code', redirect_uri: REDIRECT, code_challenge: CHALLENGE, code_challenge_method: 'S256' });
      assert.equal(p.status, 201);
      clock.advance(61_000);
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      const res = await agent.get(`/oauth2?${new URLSearchParams({ client_id: c.id, request_uri: String(p.body.request_uri) })}`);
      assert.equal(res.status, 400);
    });

    it('another client cannot use a request_uri, and an unknown one is refused', async () => {
      const a = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true });
      const b = await server.createClient({ redirectUris: [REDIRECT], scope: 'user', trusted: true });
      const p = await push(server, a, { response_type: 'code', redirect_uri: REDIRECT, code_challenge: CHALLENGE, code_challenge_method: 'S256' });
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      for (const q of [
        { client_id: b.id, request_uri: String(p.body.request_uri) },
        { request_uri: String(p.body.request_uri) },
        { client_id: a.id, request_uri: 'urn:ietf:params:oauth:request_uri:nope' },
        { client_id: a.id, request_uri: `urn:ietf:params:oauth:request_uri:${'x'.repeat(500)}` },
      ] as Record<string, string>[]) {
        const res = await agent.get(`/oauth2?${new URLSearchParams(q)}`);
        assert.equal(res.status, 400, JSON.stringify(q));
        assert.equal(res.headers.get('location'), null);
      }
      // A request_uri that is not a pushed request's is never fetched: request_uri_not_supported at the client (RFC 9101 §6).
      const remote = await agent.get(`/oauth2?${new URLSearchParams({ client_id: a.id, request_uri: 'https://evil.example/request' })}`);
      assert.equal(remote.status, 302);
      const answered = new URL(remote.headers.get('location')!);
      assert.equal(answered.origin + answered.pathname, REDIRECT);
      assert.equal(answered.searchParams.get('error'), 'request_uri_not_supported');
      const twice = await agent.get(`/oauth2?client_id=${a.id}&request_uri=${encodeURIComponent(String(p.body.request_uri))}&request_uri=x`);
      assert.equal(twice.status, 400);
      // Still usable by its own client after all that.
      const ok = await agent.get(`/oauth2?${new URLSearchParams({ client_id: a.id, request_uri: String(p.body.request_uri) })}`);
      assert.equal(ok.status, 302);
    });

    it('bad pushed requests get the RFC 6749 §5.2 error from the PAR endpoint, never a 5xx', async () => {
      const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user' });
      const good = { response_type: 'code', redirect_uri: REDIRECT, code_challenge: CHALLENGE, code_challenge_method: 'S256' };
      const cases: [Record<string, string>, string | undefined, number, string][] = [
        [{ ...good, request_uri: 'urn:ietf:params:oauth:request_uri:x' }, undefined, 400, 'invalid_request'],
        // RFC 9101 §6.2: a request object that does not verify (test/oidc/request-object.test.ts has the rest).
        [{ ...good, request: 'eyJ.eyJ.sig' }, undefined, 400, 'invalid_request_object'],
        // As at the token endpoint: a client_id beside other credentials must be theirs.
        [{ ...good, client_id: 'someone-else' }, undefined, 401, 'invalid_client'],
        [{ ...good, redirect_uri: 'https://evil.example/cb' }, undefined, 400, 'invalid_request'],
        [{ ...good, response_type: 'id_token' }, undefined, 400, 'unsupported_response_type'],
        [{ ...good, scope: 'admin' }, undefined, 400, 'invalid_scope'],
        [{ ...good, code_challenge_method: 'plain' }, undefined, 400, 'invalid_request'],
        [{ ...good, code_challenge: 'short' }, undefined, 400, 'invalid_request'],
        [{ redirect_uri: REDIRECT }, undefined, 400, 'invalid_request'],
        [good, 'Basic bm9wZTpub3Bl', 401, 'invalid_client'],
        [good, 'Bearer x', 401, 'invalid_client'],
      ];
      for (const [params, auth, status, error] of cases) {
        const r = await push(server, c, params, auth);
        assert.equal(r.status, status, `${JSON.stringify(params)} ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, error, JSON.stringify(params));
      }
      // Unauthenticated, repeated parameters, wrong media type, GET.
      const anon = await fetch(`${server.url}/oauth/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(good) });
      assert.equal(anon.status, 401);
      const basic = `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;
      const repeated = await fetch(`${server.url}/oauth/par`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: `${new URLSearchParams(good)}&scope=user&scope=user` });
      assert.equal(repeated.status, 400);
      assert.equal(((await repeated.json()) as { error: string }).error, 'invalid_request');
      const json = await fetch(`${server.url}/oauth/par`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify(good) });
      assert.ok(json.status >= 400 && json.status < 500, String(json.status));
      const nul = await fetch(`${server.url}/oauth/par`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: `${new URLSearchParams(good)}&state=%00` });
      assert.ok(nul.status < 500, String(nul.status));
      const get = await fetch(`${server.url}/oauth/par`);
      assert.ok(get.status >= 400 && get.status < 500, String(get.status));
    });
  });
}

describe('GATEHOUSE_PAR_REQUIRED and GATEHOUSE_PAR_TTL', () => {
  let server: TestServer;
  after(() => server?.close());
  it('a deployment that requires PAR refuses plain authorization requests and says so in its metadata; the lifetime follows the setting', async () => {
    server = await startServer({ env: { GATEHOUSE_PAR_REQUIRED: 'true', GATEHOUSE_PAR_TTL: '600' } });
    const meta = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(meta.require_pushed_authorization_requests, true);
    const c = await server.createClient({ redirectUris: [REDIRECT], scope: 'user' });
    const res = await fetch(`${server.url}/oauth2?${new URLSearchParams({ client_id: c.id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: CHALLENGE, code_challenge_method: 'S256' })}`, { redirect: 'manual' });
    assert.equal(res.status, 400);
    const p = await push(server, c, { response_type: 'code', redirect_uri: REDIRECT, code_challenge: CHALLENGE, code_challenge_method: 'S256' });
    assert.equal(p.status, 201);
    assert.equal(p.body.expires_in, 600);
  });

  it('bad values stop the server with a message naming the setting', async () => {
    for (const [name, value] of [['GATEHOUSE_PAR_TTL', '0'], ['GATEHOUSE_PAR_TTL', '601'], ['GATEHOUSE_PAR_TTL', 'abc'], ['GATEHOUSE_PAR_REQUIRED', 'maybe']] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'gh-par-'));
      try {
        const r = await runCli(['client', 'list', '--json'], { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}`, [name]: value });
        assert.equal(r.code, 1, `${name}=${value}: ${r.stderr}`);
        assert.match(r.stderr, new RegExp(name));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

for (const { kind, skip } of await databaseKinds()) {
  describe(`a request_uri is single-use across two processes (${kind})`, { skip }, () => {
    let a: Node;
    let b: Node;
    let dir: string;
    let databaseUrl: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-par2-'));
      databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'g.db')}` : freshDatabaseUrl('postgres');
      const env = { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: randomBytes(32).toString('base64') };
      a = await serveProcess(env);
      b = await serveProcess(env);
      (a as Node & { env?: object }).env = env;
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });

    it('pushed at one process; the same request_uri sent to both at once is answered with a code exactly once', async () => {
      const env = (a as Node & { env: Record<string, string> }).env;
      const created = await runCli(['client', 'create', '--name', 'PAR', '--redirect-uri', REDIRECT, '--scope', 'user', '--trusted', '--require-par', '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      const client = JSON.parse(created.stdout) as { client_id: string; client_secret: string; require_pushed_authorization_requests: boolean };
      assert.equal(client.require_pushed_authorization_requests, true);
      const user = await runCli(['user', 'create', '--username', 'bob', '--email', 'bob@example.test', '--password-stdin', '--json'], env, 'correct horse battery staple');
      assert.equal(user.code, 0, user.stderr);
      const agents = await Promise.all([a, b].map(async (n) => {
        const agent = new Agent(n.url);
        assert.equal((await agent.login('bob', 'correct horse battery staple')).status, 303);
        return agent;
      }));
      for (let round = 0; round < 5; round++) {
        const p = await push({ url: a.url }, { id: client.client_id, secret: client.client_secret },
          { response_type: 'code', redirect_uri: REDIRECT, state: `r${round}`, code_challenge: CHALLENGE, code_challenge_method: 'S256' });
        assert.equal(p.status, 201, JSON.stringify(p.body));
        const path = `/oauth2?${new URLSearchParams({ client_id: client.client_id, request_uri: String(p.body.request_uri) })}`;
        const answers = await Promise.all([...agents, ...agents].map((agent) => agent.get(path)));
        const codes = answers.filter((r) => r.status === 302 && new URL(r.headers.get('location')!).searchParams.has('code'));
        assert.equal(codes.length, 1, `round ${round}: ${answers.map((r) => r.status).join(',')}`);
        assert.equal(answers.filter((r) => r.status === 400).length, 3);
      }
    });
  });
}
