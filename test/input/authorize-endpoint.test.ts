/**
 * Hostile input at the authorization endpoint, both path shapes, GET (the
 * request) and POST (the decision form). Until the client and its redirect
 * URI are verified an error is an HTML page and never a redirect; after that
 * it goes back to the redirect URI with state and iss (RFC 6749 §4.1.2.1,
 * RFC 9207). One line a case.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { pkce } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { FORM, REDIRECT, expectErrorPage, expectErrorRedirect, formBody, type Fields } from '../security/support.js';

interface Fixtures {
  /** A valid request for a confidential client with one redirect URI, PKCE included. */
  ok: Fields;
  app: string;
  /** A client with two redirect URIs (redirect_uri is then required). */
  multi: string;
  pub: string;
}

/** `page`: fatal, an error page. Otherwise the error code sent to the redirect URI. */
type Outcome = { page: true } | { error: string; state?: string | null; fragment?: boolean };
type Case = [name: string, query: (f: Fixtures) => string, outcome: Outcome];

const q = formBody;
const long = (n: number) => 'x'.repeat(n);
const page = { page: true } as const;
const err = (error: string, state: string | null = 'st'): Outcome => ({ error, state });
const without = (f: Fields, ...names: string[]) => Object.fromEntries(Object.entries(f).filter(([k]) => !names.includes(k)));

const cases: Case[] = [
  // Fatal: the client or the redirect URI cannot be trusted.
  ['no parameters', () => '', page],
  ['missing client_id', (f) => q(without(f.ok, 'client_id')), page],
  ['empty client_id', (f) => q({ ...f.ok, client_id: '' }), page],
  ['unknown client_id', (f) => q({ ...f.ok, client_id: 'nope' }), page],
  ['repeated client_id', (f) => q({ ...f.ok, client_id: [f.app, f.app] }), page],
  ['client_id[] array syntax', (f) => q({ ...without(f.ok, 'client_id'), 'client_id[]': f.app }), page],
  ['very long client_id', (f) => q({ ...f.ok, client_id: long(6000) }), page],
  ['percent-garbage client_id', (f) => `${q(without(f.ok, 'client_id'))}&client_id=%ZZ%E0%A4%A%FF`, page],
  ['NUL in client_id', (f) => `${q(without(f.ok, 'client_id'))}&client_id=%00`, page],
  ['unregistered redirect_uri', (f) => q({ ...f.ok, redirect_uri: 'https://evil.example/callback' }), page],
  ['repeated redirect_uri', (f) => q({ ...f.ok, redirect_uri: [REDIRECT, REDIRECT] }), page],
  ['javascript: redirect_uri', (f) => q({ ...f.ok, redirect_uri: 'javascript:alert(1)' }), page],
  ['percent-garbage redirect_uri', (f) => `${q(without(f.ok, 'redirect_uri'))}&redirect_uri=%ZZ`, page],
  ['very long redirect_uri', (f) => q({ ...f.ok, redirect_uri: `${REDIRECT}?${long(6000)}` }), page],
  ['missing redirect_uri when two are registered', (f) => q({ ...without(f.ok, 'redirect_uri'), client_id: f.multi }), page],

  // Redirectable: the redirect URI is verified, so the error goes back to the client.
  ['missing response_type', (f) => q(without(f.ok, 'response_type')), err('invalid_request')],
  ['empty response_type', (f) => q({ ...f.ok, response_type: '' }), err('invalid_request')],
  ['unknown response_type', (f) => q({ ...f.ok, response_type: 'id_token' }), err('unsupported_response_type')],
  ['combined response_type', (f) => q({ ...f.ok, response_type: 'code token' }), err('unsupported_response_type')],
  ['very long response_type', (f) => q({ ...f.ok, response_type: long(3000) }), err('unsupported_response_type')],
  ['repeated response_type', (f) => q({ ...f.ok, response_type: ['code', 'code'] }), err('invalid_request')],
  ['implicit for a client not allowed it', (f) => q({ ...without(f.ok, 'code_challenge', 'code_challenge_method'), response_type: 'token' }), { error: 'unauthorized_client', state: 'st', fragment: true }],
  ['repeated state', (f) => q({ ...f.ok, state: ['a', 'b'] }), err('invalid_request', null)],
  ['long state is echoed intact', (f) => q({ ...f.ok, response_type: 'bogus', state: long(3000) }), err('unsupported_response_type', long(3000))],
  ['percent-garbage state is echoed as sent', (f) => `${q({ ...without(f.ok, 'state'), response_type: 'bogus' })}&state=%ZZ`, err('unsupported_response_type', '%ZZ')],
  ['malformed scope', (f) => q({ ...f.ok, scope: 'user "x"' }), err('invalid_scope')],
  ['scope with non-ASCII', (f) => q({ ...f.ok, scope: 'ユーザー' }), err('invalid_scope')],
  ['scope the client was not registered for', (f) => q({ ...f.ok, scope: 'admin' }), err('invalid_scope')],
  ['repeated scope', (f) => q({ ...f.ok, scope: ['user', 'read'] }), err('invalid_request')],
  ['code_challenge too short', (f) => q({ ...f.ok, code_challenge: long(42) }), err('invalid_request')],
  ['code_challenge too long', (f) => q({ ...f.ok, code_challenge: long(44) }), err('invalid_request')],
  ['code_challenge with illegal characters', (f) => q({ ...f.ok, code_challenge: `${long(42)}=` }), err('invalid_request')],
  ['code_challenge_method plain (RFC 9700 §2.1.1)', (f) => q({ ...f.ok, code_challenge_method: 'plain' }), err('invalid_request')],
  ['code_challenge_method lower-case s256', (f) => q({ ...f.ok, code_challenge_method: 's256' }), err('invalid_request')],
  ['code_challenge without a method', (f) => q(without(f.ok, 'code_challenge_method')), err('invalid_request')],
  ['code_challenge_method without a challenge', (f) => q(without(f.ok, 'code_challenge')), err('invalid_request')],
  ['repeated code_challenge', (f) => q({ ...f.ok, code_challenge: [String(f.ok.code_challenge), String(f.ok.code_challenge)] }), err('invalid_request')],
  ['public client without PKCE', (f) => q({ ...without(f.ok, 'code_challenge', 'code_challenge_method'), client_id: f.pub }), err('invalid_request')],
];

function check(res: Response, outcome: Outcome, status: 302 | 303, server: TestServer): Promise<unknown> | URL {
  if ('page' in outcome) return expectErrorPage(res, 400);
  return expectErrorRedirect(res, { redirectUri: REDIRECT, issuer: server.url, status, ...outcome });
}

describe('authorization endpoint input', () => {
  let server: TestServer;
  let f: Fixtures;
  let agent: Agent;
  let csrf: string;

  before(async () => {
    server = await startServer();
    const app = await server.createClient({ scope: 'user read' });
    const multi = await server.createClient({ redirectUris: [REDIRECT, `${REDIRECT}2`] });
    const pub = await server.createClient({ public: true });
    const { challenge } = pkce();
    f = {
      app: app.id, multi: multi.id, pub: pub.id,
      ok: { response_type: 'code', client_id: app.id, redirect_uri: REDIRECT, scope: 'user', state: 'st', code_challenge: challenge, code_challenge_method: 'S256' },
    };
    // The decision form's CSRF token, from a real consent page.
    agent = await signedIn(server, 'erin');
    const consent = await agent.get(`/oauth2?${q(f.ok)}`);
    assert.equal(consent.status, 200);
    csrf = parseForm(await consent.text()).fields.csrf_token!;
  });
  after(() => server.close());

  for (const [name, query, outcome] of cases) {
    it(`GET ${name}`, async () => {
      for (const path of ['/oauth2', '/login/oauth/authorize']) {
        // Signed out: validation comes before the login redirect, so nothing bad reaches the login page.
        const res = await fetch(`${server.url}${path}?${query(f)}`, { redirect: 'manual' });
        await check(res, outcome, 302, server);
      }
    });
    it(`POST decision: ${name}`, async () => {
      for (const path of ['/oauth2', '/login/oauth/authorize']) {
        const body = [query(f), `csrf_token=${encodeURIComponent(csrf)}`, 'approve=true'].filter(Boolean).join('&');
        const res = await agent.request(path, { method: 'POST', headers: { 'content-type': FORM }, body });
        // 303 after a form POST (RFC 9700 §4.12).
        await check(res, outcome, 303, server);
      }
    });
  }

  // The decision form itself.
  const decisions: [name: string, body: () => { body: string; type: string }, status: number][] = [
    ['JSON instead of a form', () => ({ body: JSON.stringify({ ...f.ok, csrf_token: csrf, approve: 'true' }), type: 'application/json' }), 400],
    ['malformed JSON', () => ({ body: '{"approve":', type: 'application/json' }), 400],
    ['text/plain', () => ({ body: q({ ...f.ok, csrf_token: csrf, approve: 'true' }), type: 'text/plain' }), 400],
    ['oversized form', () => ({ body: q({ ...f.ok, csrf_token: csrf, approve: 'true', pad: long(70_000) }), type: FORM }), 413],
    ['repeated CSRF token', () => ({ body: q({ ...f.ok, csrf_token: [csrf, csrf], approve: 'true' }), type: FORM }), 403],
    ['missing approve', () => ({ body: q({ ...f.ok, csrf_token: csrf }), type: FORM }), 400],
    ['approve neither true nor false', () => ({ body: q({ ...f.ok, csrf_token: csrf, approve: 'yes' }), type: FORM }), 400],
    ['repeated approve', () => ({ body: q({ ...f.ok, csrf_token: csrf, approve: ['true', 'false'] }), type: FORM }), 400],
  ];
  for (const [name, build, status] of decisions) {
    it(`POST decision: ${name} → error page ${status}`, async () => {
      for (const path of ['/oauth2', '/login/oauth/authorize']) {
        const { body, type } = build();
        await expectErrorPage(await agent.request(path, { method: 'POST', headers: { 'content-type': type }, body }), status);
      }
    });
  }

  it('a form POST without the consent CSRF field is an authorization request (OIDC Core §3.1.2.1): the consent page again, nothing decided', async () => {
    for (const path of ['/oauth2', '/login/oauth/authorize']) {
      const res = await agent.request(path, { method: 'POST', headers: { 'content-type': FORM }, body: q({ ...f.ok, approve: 'true' }) });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('location'), null, 'no redirect to the client: no code was issued');
      assert.match(await res.text(), /name="approve" value="true"/);
    }
  });

  it('a decision posted while signed out goes to the login page, not to the client', async () => {
    const res = await fetch(`${server.url}/oauth2`, { method: 'POST', headers: { 'content-type': FORM }, body: q({ ...f.ok, approve: 'true' }), redirect: 'manual' });
    assert.equal(res.status, 303);
    assert.equal(new URL(res.headers.get('location')!, server.url).pathname, '/login');
  });

  it('an anonymous visitor with a valid request is sent to the login page', async () => {
    const res = await new Agent(server.url).get(`/login/oauth/authorize?${q(f.ok)}`);
    assert.equal(res.status, 302);
    assert.equal(new URL(res.headers.get('location')!, server.url).pathname, '/login');
  });
});
