import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { chatPagePerson } from '../helpers/chat-page-token.js';
import { ChatApi } from '../bot/support.js';
import { formFor } from '../mfa/support.js';
import { BOT, startChatServer, type ChatServer } from '../device/support.js';

/**
 * Issue 24, finding 7: a chat is linked from /account/security, signed in, with
 * a one-time code the chat sends as `/start <code>`; the older order (/start
 * first, then a link) names the chat and what it can do, and on Gatehouse's own
 * chat service only the chat's own person may confirm it.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`linking a chat (${kind})`, { skip }, () => {
    let server: ChatServer;

    before(async () => {
      server = await startChatServer(kind);
    });
    after(async () => {
      await server?.close();
    });

    /** A person with a chat-page token and a browser signed in. */
    async function person(name: string) {
      const p = await chatPagePerson(server, name);
      const browser = new Agent(server.url);
      assert.equal((await browser.login(name, p.password)).status, 303);
      const user = (await server.gh.storage.users.findByUsername(name))!;
      return { chat: new ChatApi(server.bot!.url, p), browser, id: user.id, password: p.password };
    }
    const linkedChats = async (userId: string) => (await server.gh.storage.events.endpoints.list({ userId }))
      .filter((e) => e.kind === 'chat' && e.disabledAt === null).map((e) => e.chatId);
    const say = async (chat: ChatApi, text: string) => (await chat.replies(BOT, (await chat.send(BOT, text)).message_id))[0]!.text;

    async function newCode(browser: Agent) {
      const security = await (await browser.get('/account/security')).text();
      assert.match(security, /Link a chat/);
      const res = await browser.post('/account/security/chat-link', formFor(security, '/account/security/chat-link'));
      assert.equal(res.status, 200);
      const page = await res.text();
      const code = /<code id="link-code">([a-z2-7]{16})<\/code>/.exec(page)?.[1];
      assert.ok(code, page);
      return { code, page };
    }

    it('signed in at /account/security: a code, a link to the bot\'s chat; /start <code> links that chat, once', async () => {
      const hana = await person('hana');
      const { code, page } = await newCode(hana.browser);
      const href = /id="link-chat" href="([^"]+)"/.exec(page)?.[1]?.replace(/&amp;/g, '&');
      assert.equal(href, `${server.bot!.url}/#chat=${BOT}&start=${code}`);
      assert.match(page, /id="chat-powers"/);
      assert.match(page, /approve or refuse sign-ins/);
      const hello = await hana.chat.send(BOT, 'hello');
      await hana.chat.replies(BOT, hello.message_id);
      assert.match(await say(hana.chat, `/start ${code}`), /now linked to the Gatehouse account hana/);
      assert.deepEqual(await linkedChats(hana.id), [String(hello.chat.id)]);
      // Single use: a second chat (or the same one) sending it gets nothing.
      const ivo = await person('ivo');
      assert.match(await say(ivo.chat, `/start ${code}`), /does not work/);
      assert.deepEqual(await linkedChats(hana.id), [String(hello.chat.id)]);
      // A new code replaces the earlier one.
      const first = await newCode(ivo.browser);
      const second = await newCode(ivo.browser);
      assert.match(await say(ivo.chat, `/start ${first.code}`), /does not work/);
      assert.match(await say(ivo.chat, `/start ${second.code}`), /now linked to the Gatehouse account ivo/);
    });

    it('a code older than 10 minutes is refused', async () => {
      const jan = await person('jan');
      const { code } = await newCode(jan.browser);
      server.clock.offset += 10 * 60_000 + 1000;
      try {
        assert.match(await say(jan.chat, `/start ${code}`), /does not work/);
      } finally {
        server.clock.offset -= 10 * 60_000 + 1000;
      }
      assert.deepEqual(await linkedChats(jan.id), []);
      assert.match(await say(jan.chat, `/start ${code}`), /does not work/, 'tried once it expired: gone');
    });

    it('a session older than GATEHOUSE_REAUTH_WINDOW is asked for the password before a code is made (sudo mode)', async () => {
      const kai = await person('kai');
      const security = await (await kai.browser.get('/account/security')).text();
      server.clock.offset += 11 * 60_000;
      try {
        const stale = await kai.browser.post('/account/security/chat-link', formFor(security, '/account/security/chat-link'));
        assert.equal(stale.status, 403);
        const ask = await stale.text();
        assert.match(ask, /name="password"/);
        assert.doesNotMatch(ask, /id="link-code"/);
        const again = await kai.browser.post('/account/security/chat-link', { ...formFor(ask, '/account/security/chat-link'), password: kai.password });
        assert.equal(again.status, 200);
        assert.match(await again.text(), /<code id="link-code">[a-z2-7]{16}<\/code>/);
      } finally {
        server.clock.offset -= 11 * 60_000;
      }
    });

    it('the older order: the page names the chat and its powers; another person cannot confirm it', async () => {
      const kim = await person('kim');
      const answer = await say(kim.chat, '/start');
      const link = new URL(/https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(answer)![0]);
      const path = `${link.pathname}${link.search}`;

      // Someone else (the victim of a forwarded link) is refused, with a clear page, before and at the button.
      const lou = await person('lou');
      const refused = await lou.browser.get(path);
      assert.equal(refused.status, 403);
      assert.match(await refused.text(), /Not your chat[\s\S]*@kim/);
      const own = new URL(/https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(await say(lou.chat, '/start'))![0]);
      const lousForm = parseForm(await (await lou.browser.get(`${own.pathname}${own.search}`)).text());
      const forged = await lou.browser.post(lousForm.action, { ...lousForm.fields, token: link.searchParams.get('token')! });
      assert.equal(forged.status, 403);
      assert.deepEqual(await linkedChats(lou.id), []);

      // Kim, whose chat it is, sees which chat and bot, and what it will be able to do.
      const confirm = await kim.browser.get(path);
      assert.equal(confirm.status, 200);
      const page = await confirm.text();
      assert.match(page, /id="link-chat-name">@?kim/);
      assert.match(page, new RegExp(`id="link-bot">[^<]*@${BOT}`));
      assert.match(page, /approve or refuse sign-ins/);
      assert.match(page, /applications&#39; requests|applications' requests/);
      assert.match(page, /lock your account/);
      const form = parseForm(page);
      assert.equal((await kim.browser.post(form.action, form.fields)).status, 200);
      assert.equal((await linkedChats(kim.id)).length, 1);
    });
  });
}
