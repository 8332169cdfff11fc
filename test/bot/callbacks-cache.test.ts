import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CallbackQuery } from '@grammyjs/types';
import { Bot, InlineKeyboard } from 'grammy';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

/**
 * answerCallbackQuery's cache_time: within it a press of the same button
 * gets the cached answer and the bot hears nothing; other buttons, and the
 * same one after it, are new queries.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`callback answers cached for cache_time (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let chat: ChatApi;
    before(async () => {
      server = await startBotServer({ db: kind });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'cora'));
    });
    after(() => server.close());

    it('grammY: a second press within cache_time is answered from the cache, without an update', async () => {
      const token = await botViaBotFather(chat, 'Cache', 'cache_grammy_bot');
      const bot = new Bot(token, { client: { apiRoot: server.botUrl } });
      const queries: CallbackQuery[] = [];
      bot.command('start', (ctx) => ctx.reply('Status?', { reply_markup: new InlineKeyboard().text('Status', 'status').text('Ping', 'ping') }));
      bot.callbackQuery('status', async (ctx) => {
        queries.push(ctx.callbackQuery);
        await ctx.answerCallbackQuery({ text: `All good (${queries.length})`, cache_time: 1 });
      });
      bot.callbackQuery('ping', async (ctx) => {
        queries.push(ctx.callbackQuery);
        await ctx.answerCallbackQuery({ text: 'pong' });
      });
      await new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }));
      try {
        const hello = await chat.send('cache_grammy_bot', '/start');
        const [prompt] = await chat.replies('cache_grammy_bot', hello.message_id);
        const id = prompt!.message_id;
        assert.deepEqual((await chat.press('cache_grammy_bot', id, 'status')).body, { ok: true, result: { text: 'All good (1)' } });
        assert.deepEqual((await chat.press('cache_grammy_bot', id, 'status')).body, { ok: true, result: { text: 'All good (1)' } });
        assert.equal(queries.length, 1);
        // Without cache_time every press is a query.
        await chat.press('cache_grammy_bot', id, 'ping');
        await chat.press('cache_grammy_bot', id, 'ping');
        assert.equal(queries.length, 3);
        // After cache_time the bot is asked again.
        await new Promise((resolve) => setTimeout(resolve, 1100));
        assert.deepEqual((await chat.press('cache_grammy_bot', id, 'status')).body, { ok: true, result: { text: 'All good (4)' } });
        assert.equal(queries.length, 4);
      } finally {
        await bot.stop();
      }
    });
  });
}
