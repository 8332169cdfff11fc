import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallbackQuery, InlineKeyboardMarkup, Update } from '@grammyjs/types';
import { Bot, InlineKeyboard, webhookCallback } from 'grammy';
import { Markup, Telegraf } from 'telegraf';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, listen, signedInPerson, startBotServer, type BotTestServer } from './support.js';

const QUERY_TOO_OLD = 'Bad Request: query is too old and response timeout expired or query ID is invalid';
type WithMarkup = { message_id: number; reply_markup?: InlineKeyboardMarkup; text: string };

/**
 * Inline keyboards and button presses with unmodified grammY and telegraf
 * bots: the person sees the buttons, a press becomes a callback_query
 * update, and the bot's answerCallbackQuery comes back to the press.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`inline keyboards and callback queries (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let bob: ChatApi;
    let alice: ChatApi;
    before(async () => {
      server = await startBotServer({ db: kind, env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
      bob = new ChatApi(server.botUrl, await signedInPerson(server, 'bob'));
      alice = new ChatApi(server.botUrl, await signedInPerson(server, 'alice'));
    });
    after(() => server.close());

    it('grammY (long polling): buttons reach the person, a press reaches the bot, the answer reaches the press', async () => {
      const token = await botViaBotFather(bob, 'Approver', 'approve_grammy_bot');
      const bot = new Bot(token, { client: { apiRoot: server.botUrl } });
      const queries: CallbackQuery[] = [];
      bot.command('start', (ctx) => ctx.reply('Deploy to production?', {
        reply_markup: new InlineKeyboard().text('Approve ✅', 'approve:42').text('Reject', 'reject:42').row().url('Runbook', 'https://example.com/runbook'),
      }));
      bot.callbackQuery(/^approve:/, async (ctx) => {
        queries.push(ctx.callbackQuery);
        await ctx.answerCallbackQuery({ text: 'Approved', show_alert: true });
      });
      bot.callbackQuery(/^reject:/, (ctx) => ctx.answerCallbackQuery());
      await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }));
      try {
        const hello = await bob.send('approve_grammy_bot', '/start');
        const [prompt] = (await bob.replies('approve_grammy_bot', hello.message_id)) as WithMarkup[];
        assert.deepEqual(prompt!.reply_markup, {
          inline_keyboard: [[{ text: 'Approve ✅', callback_data: 'approve:42' }, { text: 'Reject', callback_data: 'reject:42' }], [{ text: 'Runbook', url: 'https://example.com/runbook' }]],
        });

        const pressed = await bob.press('approve_grammy_bot', prompt!.message_id, 'approve:42');
        assert.equal(pressed.status, 200);
        assert.deepEqual(pressed.body, { ok: true, result: { text: 'Approved', show_alert: true } });
        const q = queries[0]!;
        assert.match(q.id, /^\d+$/);
        assert.equal(q.from.id, hello.chat.id);
        assert.equal(q.from.username, 'bob');
        assert.equal(q.data, 'approve:42');
        assert.equal(q.message!.message_id, prompt!.message_id);
        assert.deepEqual((q.message as WithMarkup).reply_markup, prompt!.reply_markup);
        assert.match(q.chat_instance, /^-?\d+$/);

        // No text, no alert: the answer is empty.
        const rejected = await bob.press('approve_grammy_bot', prompt!.message_id, 'reject:42');
        assert.deepEqual(rejected.body, { ok: true, result: {} });
        assert.equal(queries.length, 1);

        // A second press is a new query, in the same chat_instance.
        await bob.press('approve_grammy_bot', prompt!.message_id, 'approve:42');
        assert.notEqual(queries[1]!.id, q.id);
        assert.equal(queries[1]!.chat_instance, q.chat_instance);
      } finally {
        await bot.stop();
      }
    });

    it('telegraf (webhook): the answer carries a start link of the bot', async () => {
      const token = await botViaBotFather(bob, 'Linker', 'link_telegraf_bot');
      const bot = new Telegraf(token, { telegram: { apiRoot: server.botUrl } });
      bot.start((ctx) => ctx.reply('Open?', Markup.inlineKeyboard([Markup.button.callback('Open', 'open')])));
      bot.action('open', (ctx) => ctx.answerCbQuery(undefined, { url: 't.me/link_telegraf_bot?start=opened' }));
      const receiver = await listen(bot.webhookCallback('/tg', { secretToken: 'cb_secret' }));
      try {
        await bot.telegram.setWebhook(`${receiver.url}/tg`, { secret_token: 'cb_secret' });
        const hello = await bob.send('link_telegraf_bot', '/start');
        const [prompt] = await bob.replies('link_telegraf_bot', hello.message_id);
        const pressed = await bob.press('link_telegraf_bot', prompt!.message_id, 'open');
        assert.deepEqual(pressed.body, { ok: true, result: { url: 'https://t.me/link_telegraf_bot?start=opened' } });
      } finally {
        await bot.telegram.deleteWebhook();
        await receiver.close();
      }
    });

    it('grammY webhook handler answers a press; a second answer to one query is refused', async () => {
      const token = await botViaBotFather(bob, 'Hooked', 'hook_press_bot');
      const bot = new Bot(token, { client: { apiRoot: server.botUrl } });
      const twice: string[] = [];
      bot.command('start', (ctx) => ctx.reply('Press', { reply_markup: new InlineKeyboard().text('Go', 'go') }));
      bot.callbackQuery('go', async (ctx) => {
        await ctx.answerCallbackQuery('Going');
        try {
          await ctx.answerCallbackQuery('Again');
        } catch (e) {
          twice.push((e as Error & { description: string }).description);
        }
      });
      const receiver = await listen(webhookCallback(bot, 'http'));
      try {
        await bot.api.setWebhook(`${receiver.url}/hook`);
        const hello = await bob.send('hook_press_bot', '/start');
        const [prompt] = await bob.replies('hook_press_bot', hello.message_id);
        const pressed = await bob.press('hook_press_bot', prompt!.message_id, 'go');
        assert.deepEqual(pressed.body, { ok: true, result: { text: 'Going' } });
        for (let i = 0; i < 100 && !twice.length; i++) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(twice, [QUERY_TOO_OLD]);
      } finally {
        await bot.api.deleteWebhook();
        await receiver.close();
      }
    });

    it('grammY edits the text on a press and telegraf swaps the buttons, then deletes; the person\'s waiting poll sees each change', async () => {
      const token = await botViaBotFather(bob, 'Editor', 'edit_grammy_bot');
      const bot = new Bot(token, { client: { apiRoot: server.botUrl } });
      bot.command('start', (ctx) => ctx.reply('Deploy?', { reply_markup: new InlineKeyboard().text('Approve', 'ok') }));
      bot.callbackQuery('ok', async (ctx) => {
        await ctx.editMessageText('Approved by bob');
        await ctx.answerCallbackQuery('Done');
      });
      await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }));
      let prompt: WithMarkup;
      try {
        const hello = await bob.send('edit_grammy_bot', '/start');
        [prompt] = (await bob.replies('edit_grammy_bot', hello.message_id)) as WithMarkup[] as [WithMarkup];
        const waiting = bob.messages('edit_grammy_bot', prompt.message_id, 10);
        await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual((await bob.press('edit_grammy_bot', prompt.message_id, 'ok')).body, { ok: true, result: { text: 'Done' } });
        const [edited] = (await waiting) as (WithMarkup & { edit_date?: number })[];
        assert.equal(edited!.message_id, prompt.message_id);
        assert.equal(edited!.text, 'Approved by bob');
        assert.equal(edited!.reply_markup, undefined);
        assert.ok(edited!.edit_date);
      } finally {
        await bot.stop();
      }

      const telegraf = new Telegraf(token, { telegram: { apiRoot: server.botUrl } });
      const chatId = (await bob.messages('edit_grammy_bot'))[0]!.chat.id;
      const withButtons = await telegraf.telegram.editMessageReplyMarkup(chatId, prompt.message_id, undefined, Markup.inlineKeyboard([Markup.button.callback('Undo', 'undo')]).reply_markup);
      assert.equal((withButtons as { edit_date?: number }).edit_date, (await bob.messages('edit_grammy_bot')).find((m) => m.message_id === prompt.message_id)!.edit_date);
      const waiting = bob.messages('edit_grammy_bot', prompt.message_id, 10);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(await telegraf.telegram.deleteMessage(chatId, prompt.message_id), true);
      assert.deepEqual(((await waiting)[0] as { deleted?: boolean }).deleted, true);
    });

    it('refuses presses on buttons that do not exist or in chats that are not the person\'s, with no update', async () => {
      const token = await botViaBotFather(bob, 'Strict', 'strict_press_bot');
      const call = (method: string, params: Record<string, unknown> = {}) => botApi(server.botUrl, token, method, params);
      const hello = await bob.send('strict_press_bot', '/start');
      const plain = await alice.send('strict_press_bot', 'hi');
      const updates = (await call('getUpdates')).body.result as Update[];
      const offset = updates.at(-1)!.update_id + 1;
      const sent = await call('sendMessage', { chat_id: hello.chat.id, text: 'Pick', reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] } });
      const mid = (sent.body.result as WithMarkup).message_id;
      await call('sendMessage', { chat_id: plain.chat.id, text: 'no buttons here' });

      const refusals: [ChatApi, unknown, unknown, number][] = [
        [bob, mid, 'b', 400], // no such button
        [bob, mid, 'a'.repeat(65), 400], // longer than callback data may be
        [bob, hello.message_id, 'a', 400], // the person's own message
        [bob, 9999, 'a', 404], // no such message
        [alice, mid, 'a', 400], // alice's message of that id is the bot's plain reply
        [alice, mid + 5, 'a', 404],
        [bob, 'x', 'a', 400],
        [bob, -1, 'a', 400],
        [bob, mid, '', 400],
        [bob, mid, 7, 400],
        [bob, undefined, 'a', 400],
      ];
      for (const [who, messageId, data, status] of refusals) {
        const r = await who.press('strict_press_bot', messageId, data);
        assert.equal(r.status, status, `${JSON.stringify([messageId, data])}: ${JSON.stringify(r.body)}`);
        assert.equal(typeof r.body.error, 'string');
      }
      assert.equal((await bob.press('no_such_bot', mid, 'a')).status, 404);
      const unauthenticated = await fetch(`${server.botUrl}/client/chats/strict_press_bot/callback`, { method: 'POST' });
      assert.equal(unauthenticated.status, 401);
      const wrongVerb = await fetch(`${server.botUrl}/client/chats/strict_press_bot/callback`, { method: 'GET' });
      assert.equal(wrongVerb.status, 405);
      assert.deepEqual((await call('getUpdates', { offset })).body, { ok: true, result: [] });
    });
  });
}

describe('callback queries: allowed_updates, no answer, late answers and bad values', () => {
  let server: BotTestServer;
  let bob: ChatApi;
  before(async () => {
    server = await startBotServer();
    bob = new ChatApi(server.botUrl, await signedInPerson(server, 'bob'));
  });
  after(() => server.close());

  it('answers {} after 15 s without an answer; the late answer is refused; allowed_updates without callback_query hears nothing', { timeout: 40_000 }, async () => {
    const deaf = await botViaBotFather(bob, 'Deaf', 'deaf_press_bot');
    const slow = await botViaBotFather(bob, 'Slow', 'slow_press_bot');
    const setUp = async (token: string, username: string, allowed: string[]) => {
      const call = (method: string, params: Record<string, unknown> = {}) => botApi(server.botUrl, token, method, params);
      const hello = await bob.send(username, '/start');
      const first = (await call('getUpdates', { allowed_updates: allowed })).body.result as Update[];
      const sent = await call('sendMessage', { chat_id: hello.chat.id, text: 'Pick', reply_markup: JSON.stringify({ inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] }) });
      return { call, offset: first.at(-1)!.update_id + 1, mid: (sent.body.result as WithMarkup).message_id };
    };
    const d = await setUp(deaf, 'deaf_press_bot', ['message']);
    const s = await setUp(slow, 'slow_press_bot', []);
    const started = Date.now();
    const [deafPress, slowPress] = await Promise.all([bob.press('deaf_press_bot', d.mid, 'a'), bob.press('slow_press_bot', s.mid, 'a')]);
    assert.ok(Date.now() - started >= 14_900);
    assert.deepEqual(deafPress, { status: 200, body: {} });
    assert.deepEqual(slowPress, { status: 200, body: {} });
    assert.deepEqual((await d.call('getUpdates', { offset: d.offset })).body, { ok: true, result: [] });
    const [u] = (await s.call('getUpdates', { offset: s.offset })).body.result as Update[];
    assert.equal(u!.callback_query!.data, 'a');
    const late = await s.call('answerCallbackQuery', { callback_query_id: u!.callback_query!.id, text: 'too late' });
    assert.deepEqual(late, { status: 400, body: { ok: false, error_code: 400, description: QUERY_TOO_OLD } });
  });

  it('refuses bad answerCallbackQuery values with the Bot API descriptions', async () => {
    const token = await botViaBotFather(bob, 'Values', 'values_press_bot');
    const call = (params: Record<string, unknown>) => botApi(server.botUrl, token, 'answerCallbackQuery', params);
    const hello = await bob.send('values_press_bot', '/start');
    const sent = await botApi(server.botUrl, token, 'sendMessage', { chat_id: hello.chat.id, text: 'Pick', reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] } });
    const mid = (sent.body.result as WithMarkup).message_id;
    const pressed = bob.press('values_press_bot', mid, 'a');
    let query: Update | undefined;
    for (let i = 0; i < 50 && !query; i++) {
      const got = (await botApi(server.botUrl, token, 'getUpdates', { timeout: 1 })).body.result as Update[];
      query = got.find((x) => x.callback_query);
    }
    const id = query!.callback_query!.id;
    const cases: [Record<string, unknown>, string][] = [
      [{}, QUERY_TOO_OLD],
      [{ callback_query_id: '' }, QUERY_TOO_OLD],
      [{ callback_query_id: '12345' }, QUERY_TOO_OLD],
      [{ callback_query_id: 'not a number' }, QUERY_TOO_OLD],
      [{ callback_query_id: { id } }, 'Bad Request: field "callback_query_id" must be of type String'],
      [{ callback_query_id: id, text: 'x'.repeat(201) }, 'Bad Request: MESSAGE_TOO_LONG'],
      [{ callback_query_id: id, url: 'https://example.com/' }, 'Bad Request: URL_INVALID'],
      [{ callback_query_id: id, url: 't.me/other_bot?start=1' }, 'Bad Request: URL_INVALID'],
      [{ callback_query_id: id, url: 'javascript:alert(1)' }, 'Bad Request: URL_INVALID'],
      [{ callback_query_id: id, text: ['a'] }, 'Bad Request: field "text" must be of type String'],
    ];
    for (const [params, description] of cases) {
      const r = await call(params);
      assert.deepEqual(r, { status: 400, body: { ok: false, error_code: 400, description } }, JSON.stringify(params));
    }
    // Still unanswered after the refusals: a valid answer (200 characters, cache_time) goes through once.
    const ok = await call({ callback_query_id: id, text: 'y'.repeat(200), cache_time: 30, show_alert: 'false' });
    assert.deepEqual(ok.body, { ok: true, result: true });
    assert.deepEqual((await pressed).body, { ok: true, result: { text: 'y'.repeat(200) } });
    assert.deepEqual((await call({ callback_query_id: id })).body, { ok: false, error_code: 400, description: QUERY_TOO_OLD });
  });
});
