import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';
import { databaseKinds } from '../helpers/db.js';
import { BOT, buttonsOf, lastId, linkedPerson, nextMessage, postForm, press, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';
import { CHAT_PAGE_CLIENT_ID } from '../../src/core/bot/chat-page-client.js';

type Client = { id: string; secret: string | undefined };

for (const { kind, skip } of await databaseKinds()) {
  describe(`one-tap security actions in the linked chat (${kind})`, { skip }, () => {
    let server: ChatServer;
    let frank: LinkedPerson;
    let gina: LinkedPerson;
    let app: Client;
    const tokenUrl = () => `${server.url}/oauth/token`;
    const signedIn = async (agent: Agent) => (await agent.get('/account')).status === 200;
    const codeTokens = async (agent: Agent) => {
      const { code, verifier } = await issueCode(agent, app.id);
      const r = await postForm(tokenUrl(), { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, app);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body as { access_token: string; refresh_token: string };
    };
    const refresh = (rt: string) => postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: rt }, app);
    /** A press from `who`'s chat with data that was never on a button there (a client of another Bot API may send anything). */
    const forge = async (who: LinkedPerson, data: string) => {
      const m = await who.chat.send(BOT, 'hi');
      return server.gh.chatActions.dispatch(data, { chatId: String(m.chat.id), messageId: m.message_id, now: Date.now() });
    };

    before(async () => {
      server = await startChatServer(kind);
      frank = await linkedPerson(server, 'frank');
      gina = await linkedPerson(server, 'gina');
      app = await server.createClient({ name: 'Photo printer', grantTypes: ['authorization_code', 'refresh_token'], scope: 'user' });
    });
    after(() => server.close());

    it('a new sign-in: "Sign out that session" ends that session only, and the message says so; forged for another person, nothing', async () => {
      const seen = await lastId(frank.chat);
      const laptop = new Agent(server.url);
      assert.equal((await laptop.login('frank', frank.user.password)).status, 303);
      const alert = await nextMessage(frank.chat, seen, /New sign-in to your account frank/);
      assert.deepEqual(buttonsOf(alert).map((b) => b.text), ['Sign out that session']);
      const data = buttonsOf(alert)[0]!.callback_data!;
      const forged = await forge(gina, data);
      assert.match(forged.answer, /Nothing done/);
      assert.ok(await signedIn(laptop));
      assert.equal(await press(frank.chat, alert, 'Sign out that session'), 'Signed out.');
      assert.equal(await signedIn(laptop), false);
      assert.ok(await signedIn(frank.browser), 'the other session stays');
      const edited = (await frank.chat.messages(BOT, seen)).find((m) => m.message_id === alert.message_id)!;
      assert.match(edited.text, /signed out/);
      assert.equal(buttonsOf(edited).length, 0);
    });

    it('two sign-ins a moment apart: each alert\'s button signs out its own session (the event carries the session\'s sid), a press from another chat nothing', async () => {
      const seen = await lastId(frank.chat);
      const first = new Agent(server.url);
      const second = new Agent(server.url);
      assert.equal((await first.login('frank', frank.user.password)).status, 303);
      assert.equal((await second.login('frank', frank.user.password)).status, 303);
      const alertA = await nextMessage(frank.chat, seen, /New sign-in to your account frank/);
      const alertB = await nextMessage(frank.chat, alertA.message_id, /New sign-in to your account frank/);
      // The payload names the session by its public id (OpenID Connect sid), never by the cookie.
      const sessions = await server.gh.storage.sessions.listForUser(frank.user.id, Date.now());
      const sids = sessions.map((s) => s.sid);
      const cookieB = second.cookie('gh_session')!;
      const eventSids = new Set<unknown>();
      for (const m of [alertA, alertB]) {
        const data = buttonsOf(m)[0]!.callback_data!;
        const e = await server.gh.storage.events.get(/so:(msg_\w+)/.exec(data)![1]!);
        assert.equal(typeof e?.data.sid, 'string');
        assert.ok(sids.includes(e!.data.sid as string), 'the sid is one of the sessions\'');
        assert.ok(!JSON.stringify(e!.data).includes(cookieB), 'no cookie in the payload');
        eventSids.add(e!.data.sid);
      }
      assert.equal(eventSids.size, 2, 'each sign-in names its own session');
      // Gina's chat pressing Frank's button: nothing, both stay signed in.
      assert.match((await forge(gina, buttonsOf(alertB)[0]!.callback_data!)).answer, /Nothing done/);
      assert.ok(await signedIn(first));
      assert.ok(await signedIn(second));
      // The later alert ends the later session, though the earlier one began within the same second.
      assert.equal(await press(frank.chat, alertB, 'Sign out that session'), 'Signed out.');
      assert.equal(await signedIn(second), false);
      assert.ok(await signedIn(first), 'the other sign-in\'s session stays');
      assert.equal(await press(frank.chat, alertA, 'Sign out that session'), 'Signed out.');
      assert.equal(await signedIn(first), false);
      assert.ok(await signedIn(frank.browser), 'the session of the linking stays');
    });

    it('an app granted access: "Remove access" revokes the grant and its tokens', async () => {
      const seen = await lastId(frank.chat);
      const tokens = await codeTokens(frank.browser);
      const alert = await nextMessage(frank.chat, seen, /You granted “Photo printer” access/);
      assert.deepEqual(buttonsOf(alert).map((b) => b.text), ['Remove access']);
      // Gina cannot remove Frank's grant: the data names the app, the chat decides whose.
      assert.match((await forge(gina, buttonsOf(alert)[0]!.callback_data!)).answer, /Nothing done/);
      assert.equal((await refresh(tokens.refresh_token)).status, 200);
      const again = await codeTokens(frank.browser);
      assert.equal(await press(frank.chat, alert, 'Remove access'), 'Access removed.');
      const refused = await refresh(again.refresh_token);
      assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_grant']);
      // Only the chat page's own grant is left (the chat the person pressed in).
      assert.deepEqual((await server.gh.storage.consents.listForUser(frank.user.id)).map((c) => c.clientId), [CHAT_PAGE_CLIENT_ID]);
    });

    it('/sessions and /apps list them with buttons that act', async () => {
      await codeTokens(frank.browser);
      const phone = new Agent(server.url);
      assert.equal((await phone.login('frank', frank.user.password)).status, 303);
      const sessions = await nextMessage(frank.chat, (await frank.chat.send(BOT, '/sessions')).message_id, /Your signed-in sessions/);
      assert.match(sessions.text, /Your signed-in sessions/);
      assert.ok(buttonsOf(sessions).length >= 2);
      // Gina's /sessions shows only hers.
      const hers = await nextMessage(gina.chat, (await gina.chat.send(BOT, '/sessions')).message_id, /sessions/);
      for (const b of buttonsOf(hers)) assert.ok(!buttonsOf(sessions).some((x) => x.callback_data === b.callback_data));
      assert.match((await forge(gina, buttonsOf(sessions)[0]!.callback_data!)).answer, /Nothing done/);
      // Newest first: the phone's session.
      const newest = buttonsOf(sessions)[0]!;
      assert.match(newest.text, /^Sign out 1 \(/);
      assert.equal(await press(frank.chat, sessions, newest.text), 'Signed out.');
      assert.equal(await signedIn(phone), false);
      const apps = await nextMessage(frank.chat, (await frank.chat.send(BOT, '/apps')).message_id, /Applications with access/);
      assert.match(apps.text, /Photo printer: user/);
      assert.equal(await press(frank.chat, apps, 'Remove Photo printer'), 'Access removed.');
      const none = await nextMessage(frank.chat, (await frank.chat.send(BOT, '/apps')).message_id, /No applications/);
      assert.match(none.text, /No applications/);
    });

    it('a replayed refresh token: "Lock my account" locks it and signs it out everywhere', async () => {
      const seen = await lastId(frank.chat);
      const tokens = await codeTokens(frank.browser);
      assert.equal((await refresh(tokens.refresh_token)).status, 200);
      const replay = await refresh(tokens.refresh_token);
      assert.equal(replay.body.error, 'invalid_grant');
      const alert = await nextMessage(frank.chat, seen, /was replayed/);
      assert.deepEqual(buttonsOf(alert).map((b) => b.text), ['Lock my account']);
      assert.match((await forge(gina, buttonsOf(alert)[0]!.callback_data!)).answer, /Nothing done/);
      assert.equal(await server.gh.console.isLocked(gina.user.id), false);
      assert.equal(await press(frank.chat, alert, 'Lock my account'), 'Account locked.');
      assert.equal(await server.gh.console.isLocked(frank.user.id), true);
      assert.equal(await signedIn(frank.browser), false);
      const retry = new Agent(server.url);
      assert.notEqual((await retry.login('frank', frank.user.password)).status, 303, 'a locked account cannot sign in');
    });

    it('malformed or unknown button data does nothing', async () => {
      for (const data of ['tap:', 'tap:zz:1', 'tap:so:msg_nope', 'tap:ra:', `tap:ra:${'x'.repeat(300)}`, 'tap:lk:msg_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'tap:ss:../../etc']) {
        assert.match((await forge(gina, data)).answer, /Nothing done/, data);
      }
    });
  });
}
