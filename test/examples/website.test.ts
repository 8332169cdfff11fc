import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_USER, ensureDemoUser, registerSampleClients, useSiteUrl } from '../../examples/website/clients.js';
import { startWebsite } from '../../examples/website/site.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { TestClock } from '../helpers/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** The sample website over plain HTTP (docs/oauth.md, Sample website): its server-side half, refresh included. */
describe('sample website (HTTP)', () => {
  const clock = new TestClock();
  let server: TestServer;
  let site: Awaited<ReturnType<typeof startWebsite>>;
  let clientId: string;

  before(async () => {
    server = await startServer({ clock });
    await ensureDemoUser(server.gh);
    const clients = await registerSampleClients(server.gh);
    clientId = clients.clientId;
    site = await startWebsite({ issuer: server.url, apiUrl: server.apiUrl, ...clients, port: 0, now: () => clock.now() });
    await useSiteUrl(server.gh, clients.clientId, site.url);
  });
  after(async () => {
    await site.close();
    await server.close();
  });

  /** Site → Gatehouse login → consent → back to the site's callback; returns the site's answer. */
  async function signIn(approve: 'true' | 'false') {
    // Forget earlier consent, so the consent page is shown every time.
    const user = await server.gh.storage.users.findByUsername(DEMO_USER.username);
    await server.gh.storage.consents.revoke(user!.id, clientId);
    const browserAtSite = new Agent(site.url);
    const browserAtGatehouse = new Agent(server.url);
    const start = await browserAtSite.get('/login');
    assert.equal(start.status, 303);
    const authorize = new URL(start.headers.get('location')!);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    const toLogin = await browserAtGatehouse.get(authorize.toString());
    const loggedIn = await browserAtGatehouse.login(DEMO_USER.username, DEMO_USER.password, new URL(toLogin.headers.get('location')!, server.url).searchParams.get('return_to')!);
    const consent = await browserAtGatehouse.get(loggedIn.headers.get('location')!);
    const form = parseForm(await consent.text());
    const decision = await browserAtGatehouse.post(form.action, { ...form.fields, approve });
    const back = decision.headers.get('location')!;
    assert.ok(back.startsWith(`${site.url}/callback?`), back);
    return { browserAtSite, answer: await browserAtSite.get(back) };
  }

  const tokenOf = async (agent: Agent) => {
    const res = await agent.get('/session/token');
    const text = await res.text();
    assert.equal(res.status, 200, text);
    // The refresh token stays on the site's server (RFC 9700 §4.14, refresh token protection).
    assert.doesNotMatch(text, /gh_rt_|refresh_token/);
    return JSON.parse(text) as { access_token: string; expires_at: number; refresh_at: number };
  };

  it('signs in with code + PKCE, hands the browser an access token that reads /user', async () => {
    const { browserAtSite, answer } = await signIn('true');
    assert.equal(answer.status, 303);
    const home = await browserAtSite.get('/');
    assert.match(await home.text(), /Your profile/);
    const t = await tokenOf(browserAtSite);
    assert.equal(t.refresh_at, t.expires_at - 30_000);
    const profile = await fetch(`${server.apiUrl}/user`, { headers: { authorization: `Bearer ${t.access_token}` } });
    assert.deepEqual(await profile.json(), { username: 'alice', name: 'Alice Liddell', email: 'alice@example.com', email_verified: false });
  });

  it('refreshes on its server 30 seconds before expiry, once for concurrent callers', async () => {
    const { browserAtSite } = await signIn('true');
    const first = await tokenOf(browserAtSite);
    clock.advance(first.expires_at - clock.now() - 31_000);
    assert.equal((await tokenOf(browserAtSite)).access_token, first.access_token, '31 s left: not yet');
    clock.advance(2000);
    const [a, b] = await Promise.all([tokenOf(browserAtSite), tokenOf(browserAtSite)]);
    assert.notEqual(a.access_token, first.access_token, '29 s left: refreshed');
    assert.equal(a.access_token, b.access_token);
    assert.ok(a.expires_at > first.expires_at);
    // The rotated refresh token still works: no reuse was detected.
    clock.advance(a.expires_at - clock.now() - 10_000);
    const c = await tokenOf(browserAtSite);
    assert.notEqual(c.access_token, a.access_token);
    assert.equal((await fetch(`${server.apiUrl}/user`, { headers: { authorization: `Bearer ${c.access_token}` } })).status, 200);
  });

  it('shows the refusal when the user denies consent', async () => {
    const { browserAtSite, answer } = await signIn('false');
    assert.equal(answer.status, 403);
    assert.match(await answer.text(), /Access denied[\s\S]*access_denied/);
    assert.equal((await browserAtSite.get('/session/token')).status, 401);
  });

  it('refuses a callback whose state it did not issue', async () => {
    const res = await new Agent(site.url).get('/callback?code=x&state=forged');
    assert.equal(res.status, 400);
  });
});
