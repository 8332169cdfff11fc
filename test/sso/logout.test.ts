import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, person, relyingParty, signIn } from '../oidc/support.js';
import { startLogoutReceiver, verifyLogoutToken, type LogoutReceiver } from './support.js';

const BYE = 'https://a.example.test/signed-out';

for (const { kind, skip } of await databaseKinds()) {
  describe(`single logout: RP-initiated and back-channel (${kind})`, { skip }, () => {
    let server: TestServer;
    let receiver: LogoutReceiver;
    let alice: Awaited<ReturnType<typeof person>>;
    let a: { id: string; config: oidc.Configuration };
    let b: { id: string; config: oidc.Configuration };

    before(async () => {
      // The relying parties' back-channel logout receivers are on loopback.
      server = await startServer({ db: kind, env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
      receiver = await startLogoutReceiver();
      alice = await person(server, 'alice');
      const register = async (name: string, extra: object) => {
        const c = await server.createClient({ name, redirectUris: [REDIRECT], scope: 'openid profile offline_access', backchannelLogoutUri: receiver.url(`/${name}`), ...extra });
        return { id: c.id, config: await relyingParty(server, c.id, c.secret) };
      };
      a = await register('a', { postLogoutRedirectUris: [BYE] });
      b = await register('b', { trusted: true });
    });
    after(async () => {
      await receiver.close();
      await server.close();
    });

    /** Signs in to A (password) and B (no password: the same session), as one browser. */
    async function bothSignedIn() {
      receiver.received.clear();
      const agent = new Agent(server.url);
      const atA = await signIn(a.config, agent, alice, 'openid');
      const atB = await signIn(b.config, agent, alice, 'openid offline_access');
      assert.equal(atA.sawLogin, true);
      assert.equal(atB.sawLogin, false);
      assert.equal(atB.tokens.claims()!.sid, atA.tokens.claims()!.sid);
      return { agent, atA, atB };
    }

    /** Whether the browser's session at Gatehouse still signs it in silently. */
    async function signedIn(agent: Agent): Promise<boolean> {
      const url = oidc.buildAuthorizationUrl(b.config, {
        redirect_uri: REDIRECT, scope: 'openid', prompt: 'none', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256',
      });
      const res = await agent.get(`${url.pathname}${url.search}`);
      return new URL(res.headers.get('location')!).searchParams.get('error') === null;
    }

    it('id_token_hint logs out at once, tells both applications, and returns to the registered address with state', async () => {
      const { agent, atA, atB } = await bothSignedIn();
      const sid = atA.tokens.claims()!.sid;
      const end = oidc.buildEndSessionUrl(a.config, { id_token_hint: atA.tokens.id_token!, post_logout_redirect_uri: BYE, state: 'bye-state' });
      const res = await agent.get(`${end.pathname}${end.search}`);
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), `${BYE}?state=bye-state`);
      assert.equal(await signedIn(agent), false);

      for (const [name, client] of [['a', a], ['b', b]] as const) {
        const tokens = receiver.received.get(`/${name}`) ?? [];
        assert.equal(tokens.length, 1, `logout tokens at ${name}`);
        const claims = await verifyLogoutToken(server.url, client.id, tokens[0]!);
        assert.equal(claims.sid, sid);
        assert.equal(claims.sub, alice.id);
      }
      // §2.7: the refresh token issued without offline_access ends with the session; the other stays.
      await assert.rejects(oidc.refreshTokenGrant(a.config, atA.tokens.refresh_token!), (e: oidc.ResponseBodyError) => e.error === 'invalid_grant');
      assert.ok((await oidc.refreshTokenGrant(b.config, atB.tokens.refresh_token!)).access_token);
    });

    it('without a hint the person is asked; staying keeps the session, signing out ends it', async () => {
      const { agent } = await bothSignedIn();
      const end = `/session/end?client_id=${encodeURIComponent(a.id)}&post_logout_redirect_uri=${encodeURIComponent(BYE)}&state=s1`;
      let page = await agent.get(end);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /Sign out of Gatehouse\?/);
      const form = parseForm(html);
      assert.equal(form.action, '/session/end/confirm');

      const stay = await agent.post(form.action, { ...form.fields, logout: 'no' });
      assert.equal(stay.status, 303);
      assert.equal(await signedIn(agent), true);
      assert.equal(receiver.received.size, 0);

      // A forged form (no CSRF token) does nothing.
      const forged = await agent.post(form.action, { ...form.fields, csrf_token: 'x', logout: 'yes' });
      assert.equal(forged.status, 403);
      assert.equal(await signedIn(agent), true);

      page = await agent.get(end);
      const again = parseForm(await page.text());
      const out = await agent.post(again.action, { ...again.fields, logout: 'yes' });
      assert.equal(out.status, 303);
      assert.equal(out.headers.get('location'), `${BYE}?state=s1`);
      assert.equal(await signedIn(agent), false);
      assert.equal(receiver.received.get('/a')?.length, 1);
      assert.equal(receiver.received.get('/b')?.length, 1);
    });

    it('an unregistered return address, a foreign hint or a mismatched client_id: an error page, never a redirect', async () => {
      const { agent, atA } = await bothSignedIn();
      const hint = atA.tokens.id_token!;
      const [h, p] = hint.split('.');
      const cases = [
        `post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}&client_id=${a.id}`,
        `post_logout_redirect_uri=${encodeURIComponent(BYE)}`,
        `id_token_hint=${h}.${p}.AAAA`,
        `id_token_hint=not-a-jwt`,
        `id_token_hint=${hint}&client_id=${b.id}`,
        `client_id=no-such-client`,
        `state=a&state=b`,
      ];
      for (const q of cases) {
        const res = await agent.get(`/session/end?${q}`);
        assert.equal(res.status, 400, q);
        assert.equal(res.headers.get('location'), null);
        assert.match(await res.text(), /This sign-out link is not valid/);
      }
      assert.equal(await signedIn(agent), true);
    });

    it('signed out already: straight back to the application; with nowhere to go, a signed-out page', async () => {
      const agent = new Agent(server.url);
      const back = await agent.get(`/session/end?client_id=${a.id}&post_logout_redirect_uri=${encodeURIComponent(BYE)}`);
      assert.equal(back.status, 302);
      assert.equal(back.headers.get('location'), BYE);
      const page = await agent.get('/session/end');
      assert.equal(page.status, 200);
      assert.match(await page.text(), /You are signed out/);
    });

    it("the home page's sign-out is single logout too; an application that fails to answer does not stop it", async () => {
      const { agent } = await bothSignedIn();
      receiver.status = 500;
      try {
        const home = parseForm(await (await agent.get('/')).text());
        assert.equal(home.action, '/logout');
        const res = await agent.post(home.action, home.fields);
        assert.equal(res.status, 303);
      } finally {
        receiver.status = 200;
      }
      assert.equal(await signedIn(agent), false);
      assert.equal(receiver.received.get('/a')?.length, 1);
      assert.equal(receiver.received.get('/b')?.length, 1);
    });

    it('someone else signing in on the same browser ends the previous session and its applications hear of it', async () => {
      const { agent } = await bothSignedIn();
      const bob = await person(server, `bob${kind}`);
      await agent.login(bob.username, bob.password);
      assert.equal(receiver.received.get('/a')?.length, 1);
      const claims = await verifyLogoutToken(server.url, a.id, receiver.received.get('/a')![0]!);
      assert.equal(claims.sub, alice.id);
    });

    it('the same person signing in again (prompt=login) keeps the session: nobody is logged out', async () => {
      const { agent, atA } = await bothSignedIn();
      const again = await signIn(a.config, agent, alice, 'openid', { prompt: 'login' });
      assert.equal(again.sawLogin, true);
      assert.equal(again.tokens.claims()!.sid, atA.tokens.claims()!.sid);
      assert.equal(receiver.received.size, 0);
    });
  });
}
