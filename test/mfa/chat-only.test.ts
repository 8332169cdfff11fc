import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { BOT, linkedPerson, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';
import { askChatApproval, formFor, passwordStep, turnOnChatApproval } from './support.js';

type Keyboard = { reply_markup: { inline_keyboard: { text: string; callback_data: string }[][] } };

/**
 * Issue 24, finding 1: approval in chat on its own (no authenticator app, no
 * passkey) made no sign-in wait: the password alone signed in and no message
 * was sent. Now it is a second factor of its own, turned on only by a tap in
 * the linked chat, and it stops counting when the chat link is gone.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`approval in chat as the only second factor (${kind})`, { skip }, () => {
    let server: ChatServer;
    let alice: LinkedPerson;
    let bob: LinkedPerson;

    before(async () => {
      server = await startChatServer(kind);
      alice = await linkedPerson(server, 'alice');
      bob = await linkedPerson(server, 'bob');
    });
    after(() => server?.close());

    const approvalOn = async () => /Approval in chat: <strong>on/.test(await (await alice.browser.get('/account/security')).text());
    const press = (data: string, chatId: string, messageId: number) => server.gh.chatActions.dispatch(data, { chatId, messageId, now: server.clock.now() });
    const chatIdOf = async (p: LinkedPerson) => String((await p.chat.messages(BOT)).at(-1)!.chat.id);

    async function signsStraightIn(): Promise<void> {
      const agent = new Agent(server.url);
      const res = await agent.login('alice', alice.user.password);
      assert.deepEqual([res.status, res.headers.get('location')], [303, '/']);
      assert.ok(agent.cookie('gh_session'));
    }

    it('turning it on sends a confirmation to the linked chat; it stays off until "Turn on" is tapped there', async () => {
      const ask = await askChatApproval(alice.browser, alice.chat, BOT);
      assert.match(ask.text, /for alice\b/);
      assert.equal(await approvalOn(), false, 'not on before the tap');
      assert.match(await (await alice.browser.get('/account/security?done=chat-asked')).text(), /tap &quot;Turn on&quot; there/);
      // Until then, the password alone still signs in: a broken link cannot lock her out.
      await signsStraightIn();
      // Another person's chat cannot turn it on for her.
      assert.equal((await press(ask.turnOn, await chatIdOf(bob), ask.messageId)).answer, 'This request is not yours.');
      // Cancel: stays off, and the button cannot act afterwards.
      const cancelled = await alice.chat.press(BOT, ask.messageId, ask.cancel);
      assert.equal(cancelled.status, 200);
      assert.match(String((cancelled.body.result as { text?: string }).text), /Cancelled/);
      assert.equal(await approvalOn(), false);
      assert.match((await press(ask.turnOn, await chatIdOf(alice), ask.messageId)).answer, /no longer open/);
      assert.equal(await approvalOn(), false);
    });

    it('a confirmation not tapped within 10 minutes expires and turns nothing on', async () => {
      const ask = await askChatApproval(alice.browser, alice.chat, BOT);
      server.clock.offset = 10 * 60_000 + 1000;
      try {
        const r = await press(ask.turnOn, await chatIdOf(alice), ask.messageId);
        assert.match(r.answer, /expired/);
      } finally {
        server.clock.offset = 0;
      }
      assert.equal(await approvalOn(), false);
      await signsStraightIn();
    });

    it('once tapped, every password sign-in waits for the number in chat; the event mfa.enrolled is recorded', async () => {
      await turnOnChatApproval(alice.browser, alice.chat, BOT);
      const enrolled = (await server.gh.storage.events.list({ type: 'mfa.enrolled', limit: 20 })).filter((e) => e.data.user_id === alice.user.id);
      assert.deepEqual(enrolled.map((e) => e.data.factor), ['chat_approval']);
      const last = (await alice.chat.messages(BOT)).at(-1)?.message_id ?? 0;
      const { agent, page } = await passwordStep(server.url, 'alice', alice.user.password);
      const number = /id="approval-number">(\d+)</.exec(page)?.[1];
      assert.ok(number, page);
      const asks = await alice.chat.replies(BOT, last, 1);
      const msg = asks.find((m) => /tap the number you see/.test(m.text));
      assert.ok(msg, asks.map((m) => m.text).join('\n'));
      const data = (msg as unknown as Keyboard).reply_markup.inline_keyboard[0]!.find((b) => b.text === number)!.callback_data;
      assert.equal((await alice.chat.press(BOT, msg.message_id, data)).status, 200);
      const done = await agent.post('/login/second-step/approved', formFor(page, '/login/second-step/approved'));
      assert.deepEqual([done.status, done.headers.get('location')], [303, '/']);
      assert.ok(agent.cookie('gh_session'));
    });

    it('without a tap there is no session: the second step refuses to continue', async () => {
      const { agent, page } = await passwordStep(server.url, 'alice', alice.user.password);
      assert.match(page, /id="approval-number"/);
      assert.equal((await agent.post('/login/second-step/approved', formFor(page, '/login/second-step/approved'))).status, 409);
      assert.equal(agent.cookie('gh_session'), undefined);
    });

    it('the chat link gone (/stop): approval no longer counts, so the password alone signs in again instead of waiting forever', async () => {
      const [stopped] = await alice.chat.replies(BOT, (await alice.chat.send(BOT, '/stop')).message_id);
      assert.match(stopped!.text, /no more notifications/);
      await signsStraightIn();
    });
  });
}
