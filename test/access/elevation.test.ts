import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { changeMembership, createGroup, createRole } from '../../src/core/access/admin.js';
import { databaseKinds } from '../helpers/db.js';
import { BOT, buttonsOf, lastId, linkedPerson, nextMessage, press, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';
import { formFor } from '../mfa/support.js';
import { REDIRECT, relyingParty, signIn } from '../oidc/support.js';

const MINUTE = 60_000;

/**
 * Issue 28 item 5, end to end: a person asks at /account/access, two approvers
 * press in their chats on Gatehouse's own chat page (the only client that sees
 * the notification bot's prompts), tokens carry the role while it lasts.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`elevation approved in chat (${kind})`, { skip }, () => {
    let server: ChatServer;
    let ana: LinkedPerson;
    let bob: LinkedPerson;
    let cat: LinkedPerson;
    let config: oidc.Configuration;
    before(async () => {
      server = await startChatServer(kind);
      ana = await linkedPerson(server, 'ana');
      bob = await linkedPerson(server, 'bob');
      cat = await linkedPerson(server, 'cat');
      const d = { access: server.gh.access.store, users: server.gh.storage.users, clock: server.gh.clock };
      await createGroup(d, 'ops');
      // The asker is an approver of the role too: her own approval must never count.
      for (const u of ['ana', 'bob', 'cat']) await changeMembership(d, 'ops', u, true);
      await createRole(d, { name: 'deploy', approvers: 'ops', approvals: 2, maxMinutes: 30 });
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid roles', trusted: true, introspect: true, grantTypes: ['authorization_code', 'refresh_token'] });
      config = await relyingParty(server, client.id, client.secret);
    });
    after(() => server?.close());

    /** The form at /account/access, as the person fills it in; the redirect's notice. */
    async function ask(role: string, minutes: string, reason: string) {
      const page = await (await ana.browser.get('/account/access')).text();
      const res = await ana.browser.post('/account/access', { ...formFor(page, '/account/access'), role, minutes, reason });
      assert.equal(res.status, 303, await res.text());
      return res.headers.get('location')!;
    }
    const prompt = (p: LinkedPerson, after: number) => nextMessage(p.chat, after, /^Role request: ana asks for the role deploy/);
    const events = async (type: string) => (await server.gh.storage.events.list({ type, limit: 50 })).map((e) => e.data as Record<string, unknown>);
    const roles = async () => {
      const { tokens } = await signIn(config, ana.browser, ana.user, 'openid roles');
      return { tokens, roles: jose.decodeJwt(tokens.access_token).roles };
    };

    it('two approvals from others grant it; tokens carry it while it lasts; a refresh after its end drops it', async () => {
      assert.deepEqual((await roles()).roles, []);
      const [b0, c0, a0] = [await lastId(bob.chat), await lastId(cat.chat), await lastId(ana.chat)];
      assert.equal(await ask('deploy', '20', 'hotfix for the payment outage'), '/account/access?done=asked&asked=2');
      const [toBob, toCat] = [await prompt(bob, b0), await prompt(cat, c0)];
      assert.equal(toBob.text, 'Role request: ana asks for the role deploy for 20 minutes.\nReason: “hotfix for the payment outage”\n2 approvals needed. Approve only if you know why they need it.');
      assert.deepEqual(buttonsOf(toBob).map((b) => b.text), ['Approve', 'Deny']);
      // The asker is in the approvers' group but is never asked.
      assert.equal((await ana.chat.messages(BOT, a0)).filter((m) => /Role request/.test(m.text ?? '')).length, 0);
      const [requested] = await events('role.requested');
      assert.equal(requested!.user_id, ana.user.id);
      assert.equal(requested!.approvals_required, 2);

      assert.match((await press(bob.chat, toBob, 'Approve'))!, /1 more approval needed/);
      assert.equal(await press(bob.chat, toBob, 'Approve'), 'You approved this already.');
      assert.equal((await server.gh.access.store.elevationsOf(ana.user.id, 1))[0]!.state, 'waiting', 'one approval of two');
      assert.equal((await roles()).roles?.toString(), '');

      assert.equal(await press(cat.chat, toCat, 'Approve'), 'Approved: the role is granted.');
      const told = await nextMessage(ana.chat, a0, /^You have the role deploy until/);
      assert.match(told.text, /\(20 minutes\)/);
      const [granted] = await events('role.granted');
      assert.equal(granted!.approvals, 2);
      assert.equal(granted!.approved_by, cat.user.id);
      const during = await roles();
      assert.deepEqual(during.roles, ['deploy']);
      assert.deepEqual(during.tokens.claims()!.roles, ['deploy']);
      assert.match(await (await ana.browser.get('/account/access')).text(), /deploy · 20 min[\s\S]*granted until/);

      // Past its end (the grant's time + 20 minutes): a refresh gets tokens without it, before any sweep.
      server.clock.offset += 21 * MINUTE;
      const refreshed = await oidc.refreshTokenGrant(config, during.tokens.refresh_token!);
      assert.deepEqual(jose.decodeJwt(refreshed.access_token).roles, []);
      // Introspection reads the roles now: the token issued during the elevation no longer shows it there.
      assert.deepEqual((await oidc.tokenIntrospection(config, during.tokens.access_token)).roles, []);
      const a1 = await lastId(ana.chat);
      assert.equal(await server.gh.access.elevations.sweep(server.gh.clock.now()), 1);
      await nextMessage(ana.chat, a1, /^Your role deploy has ended\.$/);
      assert.deepEqual((await events('role.expired')).map((e) => e.was), ['granted']);
    });

    it('one Deny refuses it; the asker is told in chat and the other approver\'s prompt closes', async () => {
      const [b0, c0, a0] = [await lastId(bob.chat), await lastId(cat.chat), await lastId(ana.chat)];
      await ask('deploy', '5', 'look at the logs');
      const [toBob, toCat] = [await prompt(bob, b0), await prompt(cat, c0)];
      assert.equal(await press(bob.chat, toBob, 'Deny'), 'Denied.');
      await nextMessage(ana.chat, a0, /^Your request for the role deploy was denied by bob\.$/);
      // Cat's prompt now says the outcome and has no buttons left.
      const closed = (await cat.chat.messages(BOT, c0)).find((m) => m.message_id === toCat.message_id)!;
      assert.equal(closed.text, 'Role request denied: ana does not get deploy.');
      assert.deepEqual(buttonsOf(closed), []);
      const denied = await events('role.denied');
      assert.equal(denied.at(-1)!.denied_by, bob.user.id);
      assert.deepEqual((await roles()).roles, []);
    });

    it('a request nobody decides expires; the asker is told; a late press does nothing', async () => {
      const [b0, a0] = [await lastId(bob.chat), await lastId(ana.chat)];
      await ask('deploy', '10', 'routine check');
      const toBob = await prompt(bob, b0);
      server.clock.offset += 16 * MINUTE;
      assert.match(await press(bob.chat, toBob, 'Approve') ?? '', /expired/);
      await nextMessage(ana.chat, a0, /^Your request for the role deploy expired: nobody decided in time\.$/);
      assert.deepEqual((await events('role.expired')).map((e) => e.was).sort(), ['granted', 'requested']);
      assert.deepEqual((await roles()).roles, []);
    });

    it('bad input on the form: the page again with the reason, never a 5xx; a second open request for the role is refused', async () => {
      const page = await (await ana.browser.get('/account/access')).text();
      const fields = formFor(page, '/account/access');
      for (const [over, status, msg] of [
        [{ role: 'deploy', minutes: '31', reason: 'x' }, 400, /minutes must be a whole number from 1 to 30/],
        [{ role: 'deploy', minutes: 'ten', reason: 'x' }, 400, /minutes/],
        [{ role: 'deploy', minutes: '5', reason: 'two\nlines' }, 400, /reason/],
        [{ role: 'nope', minutes: '5', reason: 'x' }, 404, /no role/],
      ] as const) {
        const res = await ana.browser.post('/account/access', { ...fields, ...over });
        assert.equal(res.status, status);
        assert.match(await res.text(), msg);
      }
      const forged = await ana.browser.post('/account/access', { ...fields, csrf_token: 'forged', role: 'deploy', minutes: '5', reason: 'x' });
      assert.equal(forged.status, 403);
      await ask('deploy', '5', 'first');
      const again = await ana.browser.post('/account/access', { ...fields, role: 'deploy', minutes: '5', reason: 'second' });
      assert.equal(again.status, 409);
    });
  });
}
