/**
 * What protects the person at the browser: iss in every authorization
 * response (RFC 9207), CSRF tokens on the consent and login forms (RFC 6749
 * §10.12), the session cookie's flags and contents, and the headers every
 * page carries (framing, referrer, caching: RFC 6819 §4.4.1.9, RFC 9700 §4.2.4).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { pkce } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { REDIRECT, expectErrorPage, expectErrorRedirect, formBody, get } from './support.js';

describe('browser-facing protections', () => {
  let server: TestServer;
  let agent: Agent;
  let app: { id: string };
  let implicit: { id: string };
  const codeRequest = (clientId = app.id) => ({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, state: 'st', code_challenge: pkce().challenge, code_challenge_method: 'S256' });

  before(async () => {
    server = await startServer();
    app = await server.createClient({ scope: 'user read' });
    implicit = await server.createClient({ grantTypes: ['implicit'], trusted: true });
    agent = await signedIn(server, 'mia');
  });
  after(() => server.close());

  /** A consent page for a client nobody has consented to yet (granted consent is remembered). */
  const consentForm = async (a: Agent, clientId?: string) => {
    const res = await a.get(`/oauth2?${formBody(codeRequest(clientId ?? (await server.createClient({})).id))}`);
    assert.equal(res.status, 200);
    return parseForm(await res.text());
  };

  // Guards `iss: config.issuer` in src/core/oauth/authorize.ts (`approve` and `errorRedirect`).
  describe('iss in every authorization response (RFC 9207)', () => {
    it('is advertised in the metadata', async () => {
      const meta = (await (await get(server.url, '/.well-known/oauth-authorization-server')).json()) as Record<string, unknown>;
      assert.equal(meta.authorization_response_iss_parameter_supported, true);
      assert.equal(meta.issuer, server.url);
    });
    it('comes with a code', async () => {
      const form = await consentForm(agent);
      const res = await agent.post(form.action, { ...form.fields, approve: 'true' });
      const back = new URL(res.headers.get('location')!);
      assert.ok(back.searchParams.get('code'));
      assert.equal(back.searchParams.get('iss'), server.url);
    });
    it('comes with an implicit access token, in the fragment', async () => {
      const res = await agent.get(`/oauth2?${formBody({ response_type: 'token', client_id: implicit.id, redirect_uri: REDIRECT, state: 'st' })}`);
      const frag = new URLSearchParams(new URL(res.headers.get('location')!).hash.slice(1));
      assert.ok(frag.get('access_token'));
      assert.equal(frag.get('iss'), server.url);
      assert.equal(frag.get('refresh_token'), null, 'RFC 6749 §4.2.2: no refresh token in the implicit grant');
    });
    it('comes with access_denied', async () => {
      const form = await consentForm(agent);
      const res = await agent.post(form.action, { ...form.fields, approve: 'false' });
      expectErrorRedirect(res, { redirectUri: REDIRECT, issuer: server.url, error: 'access_denied', state: 'st', status: 303 });
    });
    it('comes with an error, in the query and in the fragment', async () => {
      expectErrorRedirect(await get(server.url, `/oauth2?${formBody({ ...codeRequest(), response_type: 'bogus' })}`),
        { redirectUri: REDIRECT, issuer: server.url, error: 'unsupported_response_type', state: 'st' });
      expectErrorRedirect(await get(server.url, `/oauth2?${formBody({ response_type: 'token', client_id: app.id, redirect_uri: REDIRECT, state: 'st' })}`),
        { redirectUri: REDIRECT, issuer: server.url, error: 'unauthorized_client', state: 'st', fragment: true });
    });
  });

  // Guards `csrfValid(current.id, CONSENT, body.csrf_token)` in src/http/auth/authorize-routes.ts.
  describe('consent form CSRF', () => {
    for (const [name, token] of [['with a wrong token', 'forged'], ['with an empty token', '']] as const) {
      it(`a decision ${name} is refused with 403 and no code`, async () => {
        const form = await consentForm(agent);
        await expectErrorPage(await agent.post(form.action, { ...form.fields, approve: 'true', csrf_token: token }), 403);
      });
    }
    it('a form without the token is no decision: an authorization request (OIDC Core §3.1.2.1), answered with the consent page and no code', async () => {
      const form = await consentForm(agent);
      const fields = { ...form.fields, approve: 'true' } as Record<string, string>;
      delete fields.csrf_token;
      const res = await agent.post(form.action, fields);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('location'), null);
      assert.match(await res.text(), /name="csrf_token"/);
    });
    it("a token from another person's session is refused", async () => {
      const other = await signedIn(server, 'noah');
      const client = await server.createClient({});
      const theirs = await consentForm(other, client.id);
      const mine = await consentForm(agent, client.id);
      await expectErrorPage(await agent.post(mine.action, { ...mine.fields, csrf_token: theirs.fields.csrf_token!, approve: 'true' }), 403);
    });
  });

  // Guards `csrfValid(secret, LOGIN, body.csrf_token)` in src/http/auth/login-routes.ts (login CSRF).
  describe('login form CSRF', () => {
    const creds = { username: 'mia', password: 'correct horse battery staple', return_to: '/' };
    it('a sign-in without a token, or with a wrong one, is refused with 403 and no session', async () => {
      const a = new Agent(server.url);
      const form = parseForm(await (await a.get('/login')).text());
      for (const csrf of [undefined, 'forged', '']) {
        const fields: Record<string, string> = { ...form.fields, ...creds };
        if (csrf === undefined) delete fields.csrf_token;
        else fields.csrf_token = csrf;
        await expectErrorPage(await a.post('/login', fields), 403);
        assert.equal(a.cookie('gh_session'), undefined);
      }
    });
    it('a token without its cookie (a cross-site form post) is refused', async () => {
      const form = parseForm(await (await new Agent(server.url).get('/login')).text());
      const bare = await fetch(`${server.url}/login`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: formBody({ ...form.fields, ...creds }), redirect: 'manual' });
      await expectErrorPage(bare, 403);
      assert.deepEqual(bare.headers.getSetCookie().filter((c) => c.startsWith('gh_session=')), []);
    });
  });

  // Guards `cookieOptions` in src/http/auth/session-cookie.ts and `SessionManager.create` in src/core/sessions.ts.
  describe('session cookie', () => {
    it('is HttpOnly, SameSite=Lax, scoped to /, and holds only a fresh random id', async () => {
      const a = new Agent(server.url);
      const page = await a.get('/login');
      const csrfCookie = page.headers.getSetCookie().find((c) => c.startsWith('gh_csrf='))!;
      assert.match(csrfCookie, /; HttpOnly/i);
      assert.match(csrfCookie, /; SameSite=Lax/i);
      const form = parseForm(await page.text());
      // A planted session cookie is never promoted (session fixation).
      const planted = 'planted-session-id-planted-session-id-12345';
      const res = await a.request('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `gh_csrf=${a.cookie('gh_csrf')}; gh_session=${planted}` },
        body: formBody({ ...form.fields, username: 'mia', password: 'correct horse battery staple' }),
      });
      assert.equal(res.status, 303);
      const line = res.headers.getSetCookie().find((c) => c.startsWith('gh_session='))!;
      assert.match(line, /; HttpOnly/i);
      assert.match(line, /; SameSite=Lax/i);
      assert.match(line, /; Path=\//i);
      const value = /^gh_session=([^;]*)/.exec(line)![1]!;
      assert.notEqual(value, planted);
      assert.match(value, /^[A-Za-z0-9_-]{43,}$/, '256 random bits, base64url');
      const user = await server.gh.storage.users.findByUsername('mia');
      assert.ok(!value.includes('mia') && !value.includes(user!.id));
      assert.ok(!Buffer.from(value, 'base64url').toString('latin1').includes('mia'), 'no user data encoded in it');
      // Stored only as a hash: the raw id is not a session key.
      assert.equal(await server.gh.storage.sessions.get(value, Date.now()), undefined);
    });
  });

  // Guards `sendPage` in src/http/common.ts.
  describe('page headers', () => {
    const pages: [name: string, load: () => Promise<Response>][] = [
      ['login page', () => get(server.url, '/login')],
      ['home page', () => agent.get('/')],
      ['consent page', async () => agent.get(`/oauth2?${formBody(codeRequest((await server.createClient({})).id))}`)],
      ['error page', () => get(server.url, '/oauth2?client_id=nope')],
      ['not-found page', () => get(server.url, '/nowhere', { accept: 'text/html' })],
    ];
    for (const [name, load] of pages) {
      it(`${name}: no framing, no referrer, no caching`, async () => {
        const res = await load();
        await res.text();
        assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
        assert.equal(res.headers.get('x-frame-options'), 'DENY');
        assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
        assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
        assert.match(res.headers.get('cache-control') ?? '', /no-store/);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      });
    }
  });
});
