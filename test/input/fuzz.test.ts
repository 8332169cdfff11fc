/**
 * Property tests: random parameter maps (known names and noise, repeated
 * values, any code point, percent garbage) thrown at the token endpoint and
 * at both halves of the authorization endpoint. Whatever comes in, the answer
 * is below 500 and well-formed for its endpoint. fast-check prints the seed
 * and the smallest failing input when a property breaks. Then 10,000 random
 * requests of every kind (fuzz-support.ts) at the whole authorization server
 * on SQLite, and at its token, introspection and revocation endpoints on
 * PostgreSQL, which refuses NUL and invalid UTF-8 where SQLite stores them.
 * The other surfaces are in fuzz-services.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseForm, type Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { pkce } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { FORM, REDIRECT, basic, formBody, type Fields } from '../security/support.js';
import { END_SESSION_PATH, USERINFO_PATH } from '../../src/core/oidc/discovery.js';
import { LINK_PATH } from '../../src/core/notify/link.js';
import { REQUESTS, expectErrorJson, fuzz, shots, type Answer, type Shot } from './fuzz-support.js';

const RUNS = 120;

const NAMES = [
  'grant_type', 'client_id', 'client_secret', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'username',
  'password', 'response_type', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'approve', 'csrf_token', 'token',
];

interface World {
  clientId: string;
  secret: string;
  /** The same client registered for client_secret_post. */
  poster: { client_id: string; client_secret: string };
  challenge: string;
  verifier: string;
}

function arbitraries(w: World) {
  const known = fc.constantFrom(
    '', 'code', 'token', 'S256', 'plain', 'true', 'false', 'user', 'user read', 'admin', 'authorization_code', 'client_credentials',
    'refresh_token', 'password', 'implicit', REDIRECT, `${REDIRECT}/`, 'http://127.0.0.1/cb', 'javascript:alert(1)', w.clientId,
    w.secret, w.challenge, w.verifier, 'gh_rt_x', 'a.b.c', '%00', '\u0000', '\r\n', '𝒳', '\ud800',
  );
  const noise = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ minLength: 300, maxLength: 3000 }));
  const value = fc.oneof({ weight: 3, arbitrary: known }, { weight: 2, arbitrary: noise });
  const key = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...NAMES) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) });
  const params = fc.dictionary(key, fc.oneof({ weight: 4, arbitrary: value }, { weight: 1, arbitrary: fc.array(value, { minLength: 2, maxLength: 3 }) }), { maxKeys: 8 });
  // Raw bytes appended after URL encoding: percent garbage and empty pairs.
  const raw = fc.constantFrom('', '', '&%ZZ=1', '&state=%FF', '&=&&=', '&scope=%E0%A4%A', '&code_verifier=%', '&client_id[]=x', '&%00=%00');
  return { params, raw };
}

const ERROR_CHARS = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;

/** JSON with `access_token`, or an RFC 6749 §5.2 error. */
async function wellFormedTokenResponse(res: Response): Promise<void> {
  const text = await res.text();
  assert.ok(res.status < 500, `status ${res.status}: ${text.slice(0, 200)}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, text.slice(0, 200));
  assert.match(res.headers.get('cache-control') ?? '', /no-store/);
  const body = JSON.parse(text) as Record<string, unknown>;
  if (res.status === 200) assert.equal(typeof body.access_token, 'string');
  else assert.match(String(body.error), ERROR_CHARS);
}

/** A page, or a redirect to a URL that parses (and, towards the client, carries iss). */
async function wellFormedAuthorizeResponse(res: Response, server: TestServer): Promise<void> {
  const text = await res.text();
  assert.ok(res.status < 500, `status ${res.status}: ${text.slice(0, 200)}`);
  if (res.status === 302 || res.status === 303) {
    const loc = new URL(res.headers.get('location')!, server.url);
    if (loc.origin === server.url) return;
    assert.equal(`${loc.origin}${loc.pathname}`, REDIRECT, 'never a redirect to an unregistered URI');
    const params = new URLSearchParams(loc.hash ? loc.hash.slice(1) : loc.search);
    assert.equal(params.get('iss'), server.url);
    assert.ok(params.get('code') ?? params.get('access_token') ?? params.get('error'));
    return;
  }
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(text, /<!doctype html>/i);
}

/** Any answer of the authorization server: JSON errors in RFC 6749 §5.2 shape, pages, redirects only to registered URIs. */
function wellFormedAnswer(a: Answer, s: Shot, server: TestServer): void {
  if (s.method === 'HEAD' || a.status === 204 || (a.text === '' && a.status < 300)) return;
  if (a.status >= 300 && a.status < 400) {
    const loc = new URL(a.headers.get('location') ?? 'missing:', server.url);
    if (loc.origin !== server.url) assert.equal(`${loc.origin}${loc.pathname}`, REDIRECT, 'never a redirect to an unregistered URI');
    return;
  }
  const type = a.headers.get('content-type') ?? '';
  if (type.startsWith('text/html')) return void assert.match(a.text, /<!doctype html>/i);
  if (type.startsWith('text/css')) return;
  // RFC 6750 §3.1 (UserInfo): a request without any credential gets the Bearer challenge and no error code.
  const bearerChallenge = /^Bearer/.test(a.headers.get('www-authenticate') ?? '') && !('error' in (JSON.parse(a.text) as object));
  if (a.status >= 400 && !bearerChallenge) expectErrorJson(a);
  else JSON.parse(a.text);
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`random parameters (${kind})`, { skip }, () => {
    let server: TestServer;
    let world: World;
    let agent: Agent;
    let csrf: string;
    before(async () => {
      // Random X-Forwarded-For addresses spread the per-address throttles, so the fuzz reaches past them.
      server = await startServer({ db: kind, env: { GATEHOUSE_TRUST_PROXY: 'true' } });
      const grantTypes = ['authorization_code', 'implicit', 'refresh_token', 'client_credentials', 'password'];
      const c = await server.createClient({ grantTypes, scope: 'user read' });
      const poster = await server.createClient({ grantTypes, scope: 'user read', authMethod: 'client_secret_post' });
      const { challenge, verifier } = pkce();
      world = { clientId: c.id, secret: c.secret!, poster: { client_id: poster.id, client_secret: poster.secret! }, challenge, verifier };
      agent = await signedIn(server, 'fuzz');
      const consent = await agent.get(`/oauth2?${formBody({ response_type: 'code', client_id: c.id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256' })}`);
      csrf = parseForm(await consent.text()).fields.csrf_token!;
    });
    after(() => server.close());

    it('token endpoint: any parameters → < 500 and an RFC 6749 §5.1/§5.2 body', async () => {
      const { params, raw } = arbitraries(world);
      const auth = fc.constantFrom('none', 'basic', 'post', 'bad-basic');
      await fc.assert(fc.asyncProperty(params, raw, auth, async (p, r, how) => {
        const fields: Fields = how === 'post' ? { ...p, ...world.poster } : p;
        const headers: Record<string, string> = { 'content-type': FORM };
        if (how === 'basic') headers.authorization = basic(world.clientId, world.secret);
        if (how === 'bad-basic') headers.authorization = `Basic ${Buffer.from(JSON.stringify(p)).toString('base64')}`;
        const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers, body: formBody(fields) + r });
        await wellFormedTokenResponse(res);
      }), { numRuns: RUNS });
    });

    it('authorization request: any parameters → < 500, a page or a safe redirect', async () => {
      const { params, raw } = arbitraries(world);
      const base = { client_id: world.clientId, redirect_uri: REDIRECT };
      await fc.assert(fc.asyncProperty(params, raw, fc.boolean(), fc.boolean(), async (p, r, withBase, signedInAgent) => {
        const query = formBody(withBase ? { ...base, ...p } : p) + r;
        const res = signedInAgent ? await agent.get(`/oauth2?${query}`) : await fetch(`${server.url}/login/oauth/authorize?${query}`, { redirect: 'manual' });
        await wellFormedAuthorizeResponse(res, server);
      }), { numRuns: RUNS });
    });

    it('decision form: any parameters → < 500, a page or a safe redirect', async () => {
      const { params, raw } = arbitraries(world);
      const base = { client_id: world.clientId, redirect_uri: REDIRECT, response_type: 'code' };
      await fc.assert(fc.asyncProperty(params, raw, fc.boolean(), async (p, r, withBase) => {
        const body = formBody({ csrf_token: csrf, ...(withBase ? base : {}), ...p }) + r;
        const res = await agent.request('/oauth2', { method: 'POST', headers: { 'content-type': FORM }, body });
        await wellFormedAuthorizeResponse(res, server);
      }), { numRuns: RUNS });
    });

    const TOKEN_ENDPOINTS = ['/oauth/token', '/login/oauth/access_token', '/oauth/check_token', '/oauth/revoke'];
    const PAGES = ['/oauth2', '/login/oauth/authorize', '/login', '/logout', '/', '/account', '/account/sessions/revoke', '/account/apps/revoke',
      USERINFO_PATH, END_SESSION_PATH, `${END_SESSION_PATH}/confirm`, LINK_PATH, '/oauth/token_key', '/.well-known/openid-configuration',
      '/.well-known/oauth-authorization-server', '/.well-known/jwks.json', '/federation/x/start', '/nope'];
    const surface = kind === 'sqlite' ? 'the authorization server' : 'the token, introspection and revocation endpoints';
    it(`${surface}: ${REQUESTS} random requests → never a 5xx, an RFC 6749 §5.2 error, a page or a safe redirect`, async () => {
      const session = `gh_session=${agent.cookie('gh_session')}`;
      const sent = await fuzz(server.url, shots({
        paths: kind === 'sqlite' ? [...TOKEN_ENDPOINTS, ...TOKEN_ENDPOINTS, ...PAGES] : TOKEN_ENDPOINTS,
        names: NAMES,
        known: [world.clientId, world.secret, world.challenge, world.verifier, REDIRECT, 'code', 'token', 'S256', 'authorization_code', 'client_credentials',
          'refresh_token', 'password', 'implicit', 'user', 'fuzz', 'true', 'false', csrf, 'access_token', 'refresh_token', 'none', 'login', 'consent'],
        authorizations: [basic(world.clientId, world.secret), basic(world.clientId, `${world.secret}x`), basic('nobody', 'x'), `Bearer ${world.secret}`],
        cookies: [session, `${session}; gh_csrf=x`, 'gh_session=%ZZ'],
      }), (a, s) => wellFormedAnswer(a, s, server));
      assert.ok(sent >= REQUESTS);
    });
  });
}
