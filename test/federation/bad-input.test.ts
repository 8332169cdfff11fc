import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { Agent } from '../helpers/agent.js';
import { startServer } from '../helpers/server.js';
import { signInThroughProvider, startFederated, type Federated } from './support.js';

/** Every broken, stale or forged step of a third-party sign-in is a 4xx/502 page, never a 500, and signs no one in. */
describe('third-party login: bad input', () => {
  let f: Federated;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-providers-'));
    // A second provider that is down: nothing listens on port 1.
    const file = join(dir, 'providers.json');
    writeFileSync(file, JSON.stringify({ providers: [{
      id: 'down', name: 'Down', type: 'oauth2', client_id: 'x', client_secret: 'y',
      authorization_endpoint: 'http://127.0.0.1:1/authorize', token_endpoint: 'http://127.0.0.1:1/token', userinfo_endpoint: 'http://127.0.0.1:1/user',
    }] }));
    f = await startFederated({ rpEnv: { GATEHOUSE_PROVIDERS_FILE: file } });
  });
  after(async () => {
    await f?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a sign-in at `provider` and returns the state the browser got, without going to the provider. */
  async function started(agent: Agent, provider = 'elsewhere') {
    const res = await agent.get(`/federation/${provider}/start?return_to=/`);
    assert.equal(res.status, 302);
    const state = new URL(res.headers.get('location')!).searchParams.get('state')!;
    assert.equal(agent.cookie('gh_fed_state'), state);
    return state;
  }

  const callback = (agent: Agent, q: Record<string, string>, provider = 'elsewhere') =>
    agent.get(`/federation/${provider}/callback?${new URLSearchParams(q)}`);

  async function expectPage(res: Response, status: number, text: RegExp) {
    assert.equal(res.status, status);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await res.text(), text);
  }

  it('an unknown provider is 404', async () => {
    const agent = new Agent(f.rp.url);
    await expectPage(await agent.get('/federation/nope/start'), 404, /no such sign-in provider/);
    await expectPage(await agent.get('/federation/nope/callback?code=x&state=y'), 404, /no such sign-in provider/);
  });

  it('a callback without this browser\'s state is refused (login CSRF)', async () => {
    const victim = new Agent(f.rp.url);
    const attacker = new Agent(f.rp.url);
    const state = await started(attacker);
    await expectPage(await callback(victim, { code: 'x', state, iss: f.provider.url }), 400, /expired or was started in another browser/);
    await expectPage(await callback(attacker, { code: 'x', state: 'forged', iss: f.provider.url }), 400, /expired or was started in another browser/);
    await expectPage(await callback(attacker, { code: 'x' }), 400, /expired or was started in another browser/);
    assert.equal(victim.cookie('gh_session'), undefined);
  });

  it('a state can be used once', async () => {
    const agent = new Agent(f.rp.url);
    const state = await started(agent);
    await expectPage(await callback(agent, { code: 'bogus', state, iss: f.provider.url }), 400, /did not accept the sign-in/);
    // Same browser, the cookie put back: the flow is gone.
    const replay = await agent.request(`/federation/elsewhere/callback?${new URLSearchParams({ code: 'bogus', state, iss: f.provider.url })}`, { headers: { cookie: `gh_fed_state=${state}` } });
    await expectPage(replay, 400, /expired/);
  });

  it('an answer from another issuer is refused (RFC 9207 mix-up)', async () => {
    const agent = new Agent(f.rp.url);
    const state = await started(agent);
    await expectPage(await callback(agent, { code: 'x', state, iss: 'https://evil.example' }), 400, /did not come from Elsewhere/);
  });

  it('a person who says no at the provider sees "cancelled" (403)', async () => {
    const agent = new Agent(f.rp.url);
    const state = await started(agent);
    await expectPage(await callback(agent, { error: 'access_denied', state, iss: f.provider.url }), 403, /You did not let Elsewhere sign you in/);
    const other = new Agent(f.rp.url);
    const s2 = await started(other);
    await expectPage(await callback(other, { error: 'server_error<script>', state: s2, iss: f.provider.url }), 400, /could not sign you in \(server_errorscript\)/);
  });

  it('a provider that cannot be reached is 502', async () => {
    const agent = new Agent(f.rp.url);
    const state = await started(agent, 'down');
    await expectPage(await callback(agent, { code: 'x', state }, 'down'), 502, /could not be reached/);
  });

  it('repeated parameters are 400', async () => {
    const agent = new Agent(f.rp.url);
    const res = await agent.get('/federation/elsewhere/callback?state=a&state=b&code=c');
    assert.equal(res.status, 400);
  });

  it('the first-sign-in form needs its cookie, its CSRF token and a known action', async () => {
    const stranger = new Agent(f.rp.url);
    await expectPage(await stranger.get('/federation/continue'), 400, /expired/);
    await expectPage(await stranger.post('/federation/continue', { action: 'create', username: 'x' }), 400, /expired/);

    const gina = await f.provider.createUser('gina');
    const agent = new Agent(f.rp.url);
    await signInThroughProvider(f, agent, new Agent(f.provider.url), gina);
    await expectPage(await agent.post('/federation/continue', { action: 'create', username: 'gina', csrf_token: 'forged' }), 403, /expired/);
    const page = await (await agent.get('/federation/continue')).text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page)![1]!;
    await expectPage(await agent.post('/federation/continue', { action: 'delete-everything', csrf_token: csrf }), 400, /Action must be create or link/);
    const json = await agent.request('/federation/continue', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(json.status, 400);
    await expectPage(await agent.post('/federation/continue', { action: 'link', csrf_token: csrf }), 400, /Enter the username and password/);
    assert.equal(agent.cookie('gh_session'), undefined);
  });

  it('the login page lists providers only when some are configured', async () => {
    const page = await (await new Agent(f.rp.url).get('/login')).text();
    assert.match(page, /Sign in with Elsewhere/);
    assert.match(page, /Sign in with Down/);
    const plain = await startServer();
    try {
      assert.doesNotMatch(await (await fetch(`${plain.url}/login`)).text(), /Sign in with/);
      assert.equal((await fetch(`${plain.url}/federation/elsewhere/start`)).status, 404);
    } finally {
      await plain.close();
    }
  });
});

describe('third-party login: provider configuration', () => {
  const base = { GATEHOUSE_DATABASE_URL: 'sqlite::memory:' };
  const load = (providers: unknown, env: Record<string, string> = {}) => loadConfig({ ...base, GATEHOUSE_PROVIDERS: JSON.stringify(providers), ...env });
  const fails = (providers: unknown, message: RegExp) => assert.throws(() => load(providers), (e: unknown) => e instanceof ConfigError && message.test(e.message));

  it('reads the three types with their defaults', () => {
    const c = load([
      { id: 'gh', type: 'github', client_id: 'a', client_secret: 'b' },
      { id: 'corp', name: 'Corp', type: 'oidc', issuer: 'https://id.corp.example', client_id: 'c', client_secret: 'd' },
      { id: 'other', type: 'oauth2', client_id: 'e', client_secret: 'f', authorization_endpoint: 'https://o.example/a', token_endpoint: 'https://o.example/t', userinfo_endpoint: 'https://o.example/u', scopes: 'read profile' },
    ]);
    const [gh, corp, other] = c.federationProviders;
    assert.equal(gh!.authorizationEndpoint, 'https://github.com/login/oauth/authorize');
    assert.equal(gh!.tokenEndpoint, 'https://github.com/login/oauth/access_token');
    assert.equal(gh!.userinfoEndpoint, 'https://api.github.com/user');
    assert.equal(gh!.claims.subject, 'id');
    assert.equal(gh!.tokenEndpointAuthMethod, 'client_secret_post');
    assert.deepEqual(corp!.scopes, ['openid', 'profile', 'email']);
    assert.equal(corp!.claims.username, 'preferred_username');
    assert.deepEqual(other!.scopes, ['read', 'profile']);
  });

  it('takes a secret from GATEHOUSE_PROVIDER_<ID>_CLIENT_SECRET', () => {
    const c = load([{ id: 'my-idp', type: 'github', client_id: 'a' }], { GATEHOUSE_PROVIDER_MY_IDP_CLIENT_SECRET: 's3cret' });
    assert.equal(c.federationProviders[0]!.clientSecret, 's3cret');
  });

  it('refuses what would not work, naming the problem', () => {
    assert.throws(() => loadConfig({ ...base, GATEHOUSE_PROVIDERS: '{nope' }), /GATEHOUSE_PROVIDERS is not JSON/);
    assert.throws(() => loadConfig({ ...base, GATEHOUSE_PROVIDERS_FILE: '/nonexistent/providers.json' }), /cannot read \/nonexistent\/providers\.json/);
    fails({ providers: 'x' }, /must be an array of providers/);
    fails([{ id: 'Bad Id', client_id: 'a', client_secret: 'b' }], /id must be/);
    fails([{ id: 'x', type: 'saml', client_id: 'a', client_secret: 'b' }], /type must be oidc, oauth2 or github/);
    fails([{ id: 'x', type: 'github', client_secret: 'b' }], /client_id is required/);
    fails([{ id: 'x', type: 'github', client_id: 'a' }], /client_secret is required \(or GATEHOUSE_PROVIDER_X_CLIENT_SECRET\)/);
    fails([{ id: 'x', type: 'oidc', client_id: 'a', client_secret: 'b' }], /issuer is required/);
    fails([{ id: 'x', type: 'oidc', issuer: 'http://id.example', client_id: 'a', client_secret: 'b' }], /must be https/);
    fails([{ id: 'x', type: 'oauth2', client_id: 'a', client_secret: 'b', authorization_endpoint: 'https://a.example' }], /token_endpoint must be a URL/);
    fails([{ id: 'x', type: 'github', client_id: 'a', client_secret: 'b', claims: { subject: 'id', age: 'x' } }], /claims\.age: unknown field/);
    fails([{ id: 'x', type: 'github', client_id: 'a', client_secret: 'b' }, { id: 'x', type: 'github', client_id: 'a', client_secret: 'b' }], /configured twice/);
  });
});
