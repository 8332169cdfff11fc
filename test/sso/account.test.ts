import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, person, relyingParty, signIn } from '../oidc/support.js';
import { startLogoutReceiver, verifyLogoutToken, type LogoutReceiver } from './support.js';

/** Every form on a page with its action and hidden fields (the account page has one per row). */
function forms(html: string): { action: string; fields: Record<string, string> }[] {
  return [...html.matchAll(/<form[\s\S]*?<\/form>/gi)].map((m) => parseForm(m[0]));
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`account page: sessions and apps (${kind})`, { skip }, () => {
    let server: TestServer;
    let receiver: LogoutReceiver;
    let alice: Awaited<ReturnType<typeof person>>;
    let app: { id: string; config: oidc.Configuration };

    before(async () => {
      // The relying parties' back-channel logout receivers are on loopback.
      server = await startServer({ db: kind, env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
      receiver = await startLogoutReceiver();
      alice = await person(server, 'alice');
      const c = await server.createClient({ name: 'Photo Album', redirectUris: [REDIRECT], scope: 'openid profile email', backchannelLogoutUri: receiver.url('/album') });
      app = { id: c.id, config: await relyingParty(server, c.id, c.secret) };
    });
    after(async () => {
      await receiver.close();
      await server.close();
    });

    it('asks who you are first', async () => {
      const res = await new Agent(server.url).get('/account');
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), '/login?return_to=%2Faccount');
    });

    it('lists both browsers and the app; signing the other browser out ends its session and tells the app', async () => {
      const laptop = new Agent(server.url);
      const phone = new Agent(server.url);
      await laptop.login(alice.username, alice.password);
      const onPhone = await signIn(app.config, phone, alice, 'openid profile');

      const page = await laptop.get('/account');
      assert.equal(page.status, 200);
      assert.equal(page.headers.get('x-frame-options'), 'DENY');
      const html = await page.text();
      assert.match(html, /Where you are signed in/);
      assert.equal((html.match(/This browser/g) ?? []).length, 1);
      assert.match(html, /Apps signed in: Photo Album/);
      assert.match(html, /Photo Album[\s\S]*See your name/);

      const sessionForms = forms(html).filter((f) => f.action === '/account/sessions/revoke');
      assert.equal(sessionForms.length, 2);
      const phoneSid = onPhone.tokens.claims()!.sid as string;
      const phoneForm = sessionForms.find((f) => f.fields.sid === phoneSid)!;
      assert.ok(phoneForm);

      // A form without the CSRF token changes nothing.
      assert.equal((await laptop.post(phoneForm.action, { sid: phoneSid })).status, 403);
      receiver.received.clear();
      const done = await laptop.post(phoneForm.action, phoneForm.fields);
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/account?done=session');
      assert.match(await (await laptop.get('/account?done=session')).text(), /That browser is signed out/);

      assert.equal((await phone.get('/account')).status, 302);
      assert.equal((await laptop.get('/account')).status, 200);
      const tokens = receiver.received.get('/album') ?? [];
      assert.equal(tokens.length, 1);
      assert.equal((await verifyLogoutToken(server.url, app.id, tokens[0]!)).sid, phoneSid);
      // Already ended: nothing to end again.
      assert.equal((await laptop.post(phoneForm.action, phoneForm.fields)).status, 404);
    });

    it('removing an app revokes its refresh tokens and its consent', async () => {
      const agent = new Agent(server.url);
      const first = await signIn(app.config, agent, alice, 'openid profile email');
      assert.equal(first.sawConsent, true);
      const refreshed = await oidc.refreshTokenGrant(app.config, first.tokens.refresh_token!);

      const html = await (await agent.get('/account')).text();
      const remove = forms(html).find((f) => f.action === '/account/apps/revoke' && f.fields.client_id === app.id)!;
      assert.ok(remove);
      const res = await agent.post(remove.action, remove.fields);
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/account?done=app');
      assert.match(await (await agent.get('/account')).text(), /No app has access to your account/);

      await assert.rejects(oidc.refreshTokenGrant(app.config, refreshed.refresh_token!), (e: oidc.ResponseBodyError) => e.error === 'invalid_grant');
      const info = await fetch(`${server.url}/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
      assert.equal(info.status, 401);
      // The app must ask again.
      assert.equal((await signIn(app.config, agent, alice, 'openid profile email')).sawConsent, true);
      // Removing what is not there: 404, not a 500.
      assert.equal((await agent.post(remove.action, { ...remove.fields, client_id: 'nothing-here' })).status, 404);
    });

    it('signing this browser out from the list signs it out', async () => {
      const agent = new Agent(server.url);
      await agent.login(alice.username, alice.password);
      const html = await (await agent.get('/account')).text();
      // This browser is listed first, marked as such.
      const current = forms(html).find((f) => f.action === '/account/sessions/revoke')!;
      assert.ok(html.indexOf('This browser') < html.indexOf(`value="${current.fields.sid}"`));
      const res = await agent.post(current.action, current.fields);
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/');
      assert.equal((await agent.get('/account')).status, 302);
    });
  });
}
