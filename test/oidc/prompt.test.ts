import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { TestClock } from '../helpers/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, person, relyingParty, signIn, visit } from './support.js';

/** OpenID Connect Core §3.1.2.1 prompt and max_age, §3.1.2.6 errors by redirect. */
describe('OpenID Connect prompt and max_age', () => {
  const clock = new TestClock();
  let server: TestServer;
  let alice: Awaited<ReturnType<typeof person>>;
  let config: oidc.Configuration;
  let clientId: string;

  before(async () => {
    server = await startServer({ clock });
    alice = await person(server, 'alice');
    const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile' });
    clientId = client.id;
    config = await relyingParty(server, client.id, client.secret);
  });
  after(() => server.close());

  /** The first hop of an authorization request: where the server sends the browser. */
  async function first(agent: Agent, params: Record<string, string>): Promise<URL> {
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT, scope: 'openid', state: 'st', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', ...params,
    });
    const res = await agent.get(`${url.pathname}${url.search}`);
    assert.ok(res.status === 302 || res.status === 200, `status ${res.status}`);
    return new URL(res.headers.get('location') ?? `${server.url}${url.pathname}`, server.url);
  }

  const errorOf = (u: URL) => ({ at: `${u.origin}${u.pathname}`, error: u.searchParams.get('error'), state: u.searchParams.get('state'), iss: u.searchParams.get('iss') });

  it('prompt=none without a session: login_required back at the client, with state and iss', async () => {
    const u = await first(new Agent(server.url), { prompt: 'none' });
    assert.deepEqual(errorOf(u), { at: REDIRECT, error: 'login_required', state: 'st', iss: server.url });
  });

  it('prompt=none signed in but not yet allowed: consent_required', async () => {
    const agent = new Agent(server.url);
    await agent.login(alice.username, alice.password);
    const u = await first(agent, { prompt: 'none' });
    assert.equal(errorOf(u).error, 'consent_required');
  });

  it('prompt=none signed in and allowed: a code without any page', async () => {
    const agent = new Agent(server.url);
    await signIn(config, agent, alice, 'openid');
    const again = await signIn(config, agent, alice, 'openid', { prompt: 'none' });
    assert.equal(again.sawLogin, false);
    assert.equal(again.sawConsent, false);
    assert.equal(again.tokens.claims()!.sub, alice.id);
  });

  it('prompt=login asks for the password again, keeps the session id and reports the new auth_time', async () => {
    const agent = new Agent(server.url);
    const one = await signIn(config, agent, alice, 'openid');
    clock.advance(60_000);
    const two = await signIn(config, agent, alice, 'openid', { prompt: 'login' });
    assert.equal(two.sawLogin, true);
    assert.equal(two.sawConsent, false);
    const [a, b] = [one.tokens.claims()!, two.tokens.claims()!];
    assert.equal((b.auth_time as number) - (a.auth_time as number), 60);
    assert.equal(b.sid, a.sid);
  });

  it('max_age: an older sign-in means signing in again; a recent one does not', async () => {
    const agent = new Agent(server.url);
    await signIn(config, agent, alice, 'openid');
    clock.advance(120_000);
    const fresh = await signIn(config, agent, alice, 'openid', { max_age: '600' });
    assert.equal(fresh.sawLogin, false);
    const stale = await signIn(config, agent, alice, 'openid', { max_age: '60' });
    assert.equal(stale.sawLogin, true);
    assert.ok(Math.abs((stale.tokens.claims()!.auth_time as number) - clock.now() / 1000) < 2);
    // With prompt=none the same staleness is an error, not a login page.
    clock.advance(120_000);
    assert.equal(errorOf(await first(agent, { prompt: 'none', max_age: '60' })).error, 'login_required');
  });

  it('max_age=0 signs in every time without looping back to the login page', async () => {
    const agent = new Agent(server.url);
    await signIn(config, agent, alice, 'openid');
    const again = await signIn(config, agent, alice, 'openid', { max_age: '0' });
    assert.equal(again.sawLogin, true);
  });

  it('prompt=consent shows the consent page though consent was given, even to a trusted client', async () => {
    const agent = new Agent(server.url);
    await signIn(config, agent, alice, 'openid');
    const again = await signIn(config, agent, alice, 'openid', { prompt: 'consent' });
    assert.equal(again.sawConsent, true);

    const trusted = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', trusted: true });
    const rp = await relyingParty(server, trusted.id, trusted.secret);
    assert.equal((await signIn(rp, agent, alice, 'openid')).sawConsent, false);
    assert.equal((await signIn(rp, agent, alice, 'openid', { prompt: 'consent' })).sawConsent, true);
  });

  it('malformed prompt and max_age are invalid_request at the client', async () => {
    const agent = new Agent(server.url);
    const cases: Record<string, string>[] = [{ prompt: 'none login' }, { prompt: 'bogus' }, { max_age: '-1' }, { max_age: 'soon' }];
    for (const params of cases) {
      const u = await first(agent, params);
      assert.deepEqual(errorOf(u), { at: REDIRECT, error: 'invalid_request', state: 'st', iss: server.url }, JSON.stringify(params));
    }
  });

  it('select_account has no one else to choose and just proceeds', async () => {
    const agent = new Agent(server.url);
    const { tokens } = await signIn(config, agent, alice, 'openid', { prompt: 'select_account' });
    assert.equal(tokens.claims()!.aud, clientId);
  });

  it('the login page after prompt=login still names the application', async () => {
    const agent = new Agent(server.url);
    await agent.login(alice.username, alice.password);
    const u = await first(agent, { prompt: 'login', max_age: '5' });
    assert.equal(u.pathname, '/login');
    const returnTo = new URL(u.searchParams.get('return_to')!, server.url);
    assert.equal(returnTo.searchParams.get('prompt'), null);
    assert.equal(returnTo.searchParams.get('max_age'), null);
    assert.match(await (await agent.get(`${u.pathname}${u.search}`)).text(), /to continue to/);
    await visit(agent, alice, returnTo);
  });
});
