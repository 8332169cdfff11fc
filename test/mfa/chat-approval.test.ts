import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '@grammyjs/types';
import { createUser } from '../../src/core/admin.js';
import { createBot } from '../../src/core/bot/manage.js';
import { generateSecretKey } from '../../src/core/secret-box.js';
import { argon2Hasher } from '../../src/infra/argon2.js';
import { startNotifyWorker, type RunningNotifyWorker } from '../../src/infra/notify-worker.js';
import { openStorage } from '../../src/store/index.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { chatPagePerson } from '../helpers/chat-page-token.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ChatApi } from '../bot/support.js';
import { enrolTotp, formFor, passwordStep, turnOnChatApproval } from './support.js';

const BOT = 'gatehouse_notify_bot';
type Buttons = Message.TextMessage & { reply_markup?: { inline_keyboard: { text: string; callback_data: string }[][] } };

for (const { kind, skip } of await databaseKinds()) {
  describe(`sign-in approval in chat with number matching (${kind})`, { skip }, () => {
    let server: TestServer;
    let notify: RunningNotifyWorker;
    let dir: string;
    let databaseUrl: string;
    let offset = 0;
    const clock = { now: () => Date.now() + offset };
    let alice: { chat: ChatApi; browser: Agent; password: string; id: string };
    let bob: { chat: ChatApi; chatId: number };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-mfa-'));
      databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'g.db')}` : freshDatabaseUrl('postgres');
      const secretKey = generateSecretKey().toString('base64');
      // The notification bot exists before the server starts, so its token can be a setting like in production.
      const storage = await openStorage(databaseUrl, { secretKey });
      const ops = await createUser(storage, argon2Hasher(), clock, { username: 'ops', email: 'ops@example.test', password: 'operator password 1' });
      const { token } = await createBot(storage.bot, clock, { ownerUserId: ops.id, username: BOT, name: 'Gatehouse notifications' });
      await storage.close();
      server = await startServer({
        db: kind, clock,
        env: { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: secretKey, GATEHOUSE_ROLES: 'auth,bot', GATEHOUSE_NOTIFY_BOT_TOKEN: token },
      });
      // Expired approvals swept every 100 ms (5 s in production) so the test need not wait.
      notify = startNotifyWorker(server.gh, server.logger, { approvalSweepMs: 100 });

      // Alice links her chat from Gatehouse's own chat page (its token first: signing in asks for the second factor once she has one).
      const person = await chatPagePerson(server, 'alice');
      const chat = new ChatApi(server.bot!.url, person);
      const [answer] = await chat.replies(BOT, (await chat.send(BOT, '/start')).message_id);
      const link = new URL(/https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(answer!.text)![0]);
      const browser = new Agent(server.url);
      const password = 'correct horse battery staple';
      assert.equal((await browser.login('alice', password)).status, 303);
      const confirm = parseForm(await (await browser.get(`${link.pathname}${link.search}`)).text());
      assert.equal((await browser.post(confirm.action, confirm.fields)).status, 200);
      await enrolTotp(browser);
      const page = await (await browser.get('/account/security')).text();
      assert.match(page, /Approve sign-ins in chat/);
      // On only once "Turn on" is tapped in the linked chat (issue 24).
      await turnOnChatApproval(browser, chat, BOT);
      const user = await server.gh.storage.users.findByUsername('alice');
      alice = { chat, browser, password, id: user!.id };
      const bobPerson = await chatPagePerson(server, 'bob');
      const bobChat = new ChatApi(server.bot!.url, bobPerson);
      bob = { chat: bobChat, chatId: (await bobChat.send(BOT, 'hello')).chat.id };
    });
    after(async () => {
      await notify?.stop();
      await server?.close();
      await dropDatabase(databaseUrl);
      rmSync(dir, { recursive: true, force: true });
    });

    /** Password, then the page's number and the chat message with its buttons. */
    async function request() {
      const last = (await alice.chat.messages(BOT)).at(-1)?.message_id ?? 0;
      const { agent, page } = await passwordStep(server.url, 'alice', alice.password);
      const number = /id="approval-number">(\d+)</.exec(page)?.[1];
      assert.ok(number, page);
      const asks = (await alice.chat.replies(BOT, last, 1)) as Buttons[];
      const msg = asks.find((m) => /tap the number you see/.test(m.text))!;
      assert.match(msg.text, /^Sign-in from .+ near 127\.0\.0\.1 — tap the number you see$/);
      const rows = msg.reply_markup!.inline_keyboard;
      assert.equal(rows[0]!.length, 3);
      assert.equal(new Set(rows[0]!.map((b) => b.text)).size, 3, 'three distinct numbers');
      assert.deepEqual(rows[1]!.map((b) => b.text), ['Not me']);
      // Each button carries the request's random id and the button's index, never the number (the id may contain digits by chance).
      for (const b of rows.flat()) assert.match(b.callback_data, /\.([0-2]|n)$/, 'the answer is not in clear in callback_data');
      const button = (text: string) => rows.flat().find((b) => b.text === text)!.callback_data;
      const wrong = rows[0]!.find((b) => b.text !== number)!.text;
      return { agent, page, number, msg, button, wrong };
    }

    const edited = async (id: number) => (await alice.chat.messages(BOT)).find((m) => m.message_id === id) as Buttons;

    it('right number: the waiting page continues within a second; the message shows the outcome; a replayed press cannot act twice', async () => {
      const r = await request();
      const started = Date.now();
      const waiting = r.agent.get('/login/second-step/wait').then(async (res) => ({ state: ((await res.json()) as { state: string }).state, at: Date.now() }));
      await new Promise((res) => setTimeout(res, 100));
      const pressedAt = Date.now();
      const pressed = await alice.chat.press(BOT, r.msg.message_id, r.button(r.number));
      assert.equal(pressed.status, 200);
      assert.match(String((pressed.body.result as { text?: string }).text), /Approved/);
      const woke = await waiting;
      assert.equal(woke.state, 'approved');
      assert.ok(woke.at - pressedAt < 1000, `continued ${woke.at - pressedAt} ms after the press (started ${pressedAt - started} ms in)`);
      const done = await r.agent.post('/login/second-step/approved', formFor(r.page, '/login/second-step/approved'));
      assert.equal(done.status, 303);
      assert.ok(r.agent.cookie('gh_session'));
      const m = await edited(r.msg.message_id);
      assert.equal(m.text, 'Sign-in approved.');
      assert.ok(!m.reply_markup?.inline_keyboard.flat().length, 'the buttons are gone');
      const again = await server.gh.chatActions.dispatch(r.button(r.wrong), { chatId: String(r.msg.chat.id), messageId: r.msg.message_id, now: Date.now() });
      assert.match(again.answer, /already approved/);
    });

    it('without script the page continues by reloading once the number was tapped', async () => {
      const r = await request();
      assert.match(r.page, /<noscript><meta http-equiv="refresh"/);
      assert.equal((await r.agent.get('/login/second-step')).status, 200, 'still waiting');
      await alice.chat.press(BOT, r.msg.message_id, r.button(r.number));
      const res = await r.agent.get('/login/second-step');
      assert.equal(res.status, 303);
      assert.ok(r.agent.cookie('gh_session'));
    });

    it('wrong number denies; another chat\'s press is refused; forged data does nothing', async () => {
      const r = await request();
      const stranger = await server.gh.chatActions.dispatch(r.button(r.number), { chatId: String(bob.chatId), messageId: r.msg.message_id, now: Date.now() });
      assert.equal(stranger.answer, 'This request is not yours.');
      // Bob cannot press a button of a message that is not in his chat at all.
      assert.notEqual((await bob.chat.press(BOT, r.msg.message_id, r.button(r.number))).status, 200);
      for (const data of ['signin:', 'signin:AAAAAAAAAAAAAAAA.0', `${r.button(r.number).slice(0, -1)}7`, 'nobody:x']) {
        const f = await server.gh.chatActions.dispatch(data, { chatId: String(r.msg.chat.id), messageId: r.msg.message_id, now: Date.now() });
        assert.match(f.answer, /no longer/);
      }
      const pressed = await alice.chat.press(BOT, r.msg.message_id, r.button(r.wrong));
      assert.match(String((pressed.body.result as { text?: string }).text), /Wrong number/);
      assert.deepEqual(await (await r.agent.get('/login/second-step/wait')).json(), { state: 'denied' });
      assert.equal((await r.agent.post('/login/second-step/approved', formFor(r.page, '/login/second-step/approved'))).status, 403);
      assert.equal(r.agent.cookie('gh_session'), undefined);
      assert.equal((await edited(r.msg.message_id)).text, 'Sign-in denied.');
      // The right number after the decision changes nothing.
      const late = await server.gh.chatActions.dispatch(r.button(r.number), { chatId: String(r.msg.chat.id), messageId: r.msg.message_id, now: Date.now() });
      assert.match(late.answer, /already denied/);
    });

    it('two presses racing: one decision', async () => {
      const r = await request();
      const at = { chatId: String(r.msg.chat.id), messageId: r.msg.message_id, now: Date.now() };
      const answers = await Promise.all([r.button(r.number), r.button(r.wrong), r.button(r.number), r.button(r.wrong)]
        .map((d) => server.gh.chatActions.dispatch(d, at)));
      assert.equal(answers.filter((a) => !/already/.test(a.answer)).length, 1, answers.map((a) => a.answer).join(' | '));
    });

    it('expires after 2 minutes: the press is told so and the message says expired', async () => {
      const r = await request();
      offset = 121_000;
      try {
        const pressed = await alice.chat.press(BOT, r.msg.message_id, r.button(r.number));
        assert.match(String((pressed.body.result as { text?: string }).text), /expired/);
        assert.match((await edited(r.msg.message_id)).text, /expired/);
        assert.equal((await r.agent.post('/login/second-step/approved', formFor(r.page, '/login/second-step/approved'))).status, 400);
      } finally {
        offset = 0;
      }
    });

    it('nobody presses: soon after its 2 minutes the message says expired by itself, the expiry recorded once however many processes sweep', async () => {
      const r = await request();
      const approvalId = (await server.gh.storage.events.list({ type: 'signin.approval.requested', limit: 1 }))[0]!.data.approval_id as string;
      assert.equal((await server.gh.mfa.store.findApproval(approvalId))?.pending.approval?.messageId, r.msg.message_id);
      await new Promise((res) => setTimeout(res, 300));
      assert.match((await edited(r.msg.message_id)).text, /tap the number/, 'not before its time');
      offset = 121_000;
      try {
        // Other processes sweeping at the same moment as this one's worker.
        await Promise.all([server.gh.mfa.approval.sweepExpired(clock.now()), server.gh.mfa.approval.sweepExpired(clock.now())]);
        let m = await edited(r.msg.message_id);
        for (let i = 0; i < 30 && !/expired/.test(m.text); i++) m = (await new Promise((res) => setTimeout(res, 100)), await edited(r.msg.message_id));
        assert.equal(m.text, 'Sign-in request expired. Nothing was approved.');
        assert.ok(!m.reply_markup?.inline_keyboard.flat().length, 'the buttons are gone');
        const stored = (await server.gh.mfa.store.findApproval(approvalId))!.pending.approval!;
        assert.deepEqual([stored.state, stored.messageId], ['expired', null], 'nothing left to edit');
        await new Promise((res) => setTimeout(res, 300));
        const expiries = (await server.gh.storage.events.list({ type: 'signin.approval.denied', limit: 50 })).filter((e) => e.data.approval_id === approvalId);
        assert.deepEqual(expiries.map((e) => e.data.reason), ['expired']);
        assert.deepEqual(await (await r.agent.get('/login/second-step/wait')).json(), { state: 'expired' });
      } finally {
        offset = 0;
      }
    });

    it('a process that expired an approval and stopped before editing: the next sweep edits the message', async () => {
      const r = await request();
      const approvalId = (await server.gh.storage.events.list({ type: 'signin.approval.requested', limit: 1 }))[0]!.data.approval_id as string;
      // The conditional UPDATE done, the edit never made (the process stopped in between).
      assert.equal(await server.gh.mfa.store.expireApproval(approvalId, clock.now() + 121_000), true);
      offset = 121_000;
      try {
        let m = await edited(r.msg.message_id);
        for (let i = 0; i < 30 && !/expired/.test(m.text); i++) m = (await new Promise((res) => setTimeout(res, 100)), await edited(r.msg.message_id));
        assert.equal(m.text, 'Sign-in request expired. Nothing was approved.');
        assert.equal((await server.gh.mfa.store.findApproval(approvalId))!.pending.approval!.messageId, null);
      } finally {
        offset = 0;
      }
    });

    it('"Not me" denies and locks the account until an administrator unlocks it', async () => {
      const r = await request();
      const seen = (await alice.chat.messages(BOT)).at(-1)!.message_id;
      const pressed = await alice.chat.press(BOT, r.msg.message_id, r.button('Not me'));
      assert.equal((pressed.body.result as { show_alert?: boolean }).show_alert, true);
      assert.match((await server.gh.botStorage.chats.getMessage(r.msg.from!.id, r.msg.chat.id, r.msg.message_id))!.text ?? '', /locked/);
      assert.equal((await r.agent.post('/login/second-step/approved', formFor(r.page, '/login/second-step/approved'))).status, 403);
      const again = new Agent(server.url);
      const refused = await again.login('alice', alice.password);
      assert.equal(refused.status, 403);
      assert.match(await refused.text(), /locked/);
      // The lock revoked every token of the account, the chat page's own included (issue 24, finding 2):
      // the chat page asks to sign in again, which the lock refuses.
      await assert.rejects(alice.chat.messages(BOT, seen), /invalid_token/);
      // The user.locked alert still reaches the linked chat through the outbox: read from the chat's storage.
      const botId = r.msg.from!.id;
      let alert: string | undefined;
      for (let i = 0; i < 50 && !alert; i++) {
        alert = (await server.gh.botStorage.chats.messagesAfter(botId, r.msg.chat.id, seen, 20)).map((m) => m.text ?? '').find((t: string) => /is locked: you answered .Not me./.test(t));
        if (!alert) await new Promise((res) => setTimeout(res, 100));
      }
      assert.ok(alert);
      await server.gh.console.setLocked(alice.id, null);
      const unlocked = await new Agent(server.url).login('alice', alice.password);
      assert.equal(unlocked.headers.get('location'), '/login/second-step');
    });
  });
}
