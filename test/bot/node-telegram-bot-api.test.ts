import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '@grammyjs/types';
import { Bot, InlineKeyboardBuilder, ReplyKeyboardBuilder } from 'node-telegram-bot-api';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

type Shown = Message.TextMessage & { reply_markup?: unknown; edit_date?: number };

/** An unmodified node-telegram-bot-api (v2) bot, which posts forms with nested fields as JSON text, by long polling. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`node-telegram-bot-api (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let chat: ChatApi;
    before(async () => {
      server = await startBotServer({ db: kind });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'nina'));
    });
    after(() => server.close());

    it('sends keyboards, hears a press, edits the message and answers; sets commands', async () => {
      const token = await botViaBotFather(chat, 'Classic', 'classic_ntba_bot');
      const bot = new Bot(token, { apiRoot: server.botUrl });
      const pressed: string[] = [];
      bot.command('start', (ctx) => ctx.reply('Vote:', { reply_markup: new InlineKeyboardBuilder().text('👍', 'up').url('Docs', 'https://example.com/docs').build() }));
      bot.command('menu', (ctx) => ctx.reply('Menu', { reply_markup: new ReplyKeyboardBuilder().text('Yes').text('No').build({ resize_keyboard: true }) }));
      bot.on('callback_query', async (ctx) => {
        const q = ctx.callbackQuery!;
        pressed.push(q.data!);
        await ctx.api.editMessageText({ chat_id: q.message!.chat.id, message_id: q.message!.message_id, text: `Voted ${q.data}` });
        await ctx.answerCallbackQuery({ text: `You tapped ${q.data}` });
      });
      const polling = bot.startPolling();
      try {
        assert.equal(await bot.api.setMyCommands({ commands: [{ command: 'start', description: 'Vote' }, { command: 'menu', description: 'Menu' }] }), true);
        assert.deepEqual(await bot.api.getMyCommands({}), [{ command: 'start', description: 'Vote' }, { command: 'menu', description: 'Menu' }]);

        const hello = await chat.send('classic_ntba_bot', '/start');
        const [vote] = (await chat.replies('classic_ntba_bot', hello.message_id)) as Shown[];
        assert.deepEqual(vote!.reply_markup, { inline_keyboard: [[{ text: '👍', callback_data: 'up' }, { text: 'Docs', url: 'https://example.com/docs' }]] });
        assert.deepEqual((await chat.press('classic_ntba_bot', vote!.message_id, 'up')).body, { ok: true, result: { text: 'You tapped up' } });
        // The handler edits before it answers, so the edit has committed once the press has its answer
        // (a long poll begun before the press could reach the server after the edit, and miss it).
        const [edited] = (await chat.messages('classic_ntba_bot', vote!.message_id - 1)) as Shown[];
        assert.equal(edited!.text, 'Voted up');
        assert.ok(edited!.edit_date);
        assert.deepEqual(pressed, ['up']);

        const menu = await chat.send('classic_ntba_bot', '/menu');
        const [keyboard] = (await chat.replies('classic_ntba_bot', menu.message_id)) as Shown[];
        assert.deepEqual(keyboard!.reply_markup, { keyboard: [[{ text: 'Yes' }, { text: 'No' }]], resize_keyboard: true });
      } finally {
        bot.stop();
        await polling.catch(() => undefined);
      }
    });
  });
}
