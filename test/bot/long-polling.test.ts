import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Bot } from 'grammy';
import { Telegraf } from 'telegraf';
import { message } from 'telegraf/filters';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

/**
 * Real bots written with grammY and telegraf, unchanged but for their API
 * root, receive a person's message by long polling and reply; the person
 * reads the reply through the chat client API.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`bots long polling (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let chat: ChatApi;
    before(async () => {
      server = await startBotServer({ db: kind });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'bob'));
    });
    after(() => server.close());

    it('grammY answers /start and echoes text', async () => {
      const token = await botViaBotFather(chat, 'Echo', 'echo_grammy_bot');
      const bot = new Bot(token, { client: { apiRoot: server.botUrl } });
      bot.command('start', (ctx) => ctx.reply(`Hello ${ctx.from?.first_name}, chat ${ctx.chat.id}`));
      bot.on('message:text', (ctx) => ctx.reply(`echo: ${ctx.message.text}`, { reply_parameters: { message_id: ctx.message.message_id } }));
      const started = new Promise<void>((resolve) => void bot.start({ onStart: () => resolve() }));
      await started;
      try {
        const hello = await chat.send('echo_grammy_bot', '/start');
        const [greeting] = await chat.replies('echo_grammy_bot', hello.message_id);
        assert.equal(greeting!.text, `Hello bob, chat ${hello.chat.id}`);
        assert.equal(greeting!.from!.username, 'echo_grammy_bot');
        const mine = await chat.send('echo_grammy_bot', 'ping ✈️');
        const [echo] = await chat.replies('echo_grammy_bot', mine.message_id);
        assert.equal(echo!.text, 'echo: ping ✈️');
        assert.equal((echo as { reply_to_message?: { message_id: number } }).reply_to_message?.message_id, mine.message_id);
      } finally {
        await bot.stop();
      }
    });

    it('telegraf answers text', async () => {
      const token = await botViaBotFather(chat, 'Shout', 'shout_telegraf_bot');
      const bot = new Telegraf(token, { telegram: { apiRoot: server.botUrl } });
      bot.on(message('text'), (ctx) => ctx.reply(ctx.message.text.toUpperCase()));
      const started = new Promise<void>((resolve) => void bot.launch({ dropPendingUpdates: false }, () => resolve()));
      await started;
      try {
        const mine = await chat.send('shout_telegraf_bot', 'quiet please');
        const [reply] = await chat.replies('shout_telegraf_bot', mine.message_id);
        assert.equal(reply!.text, 'QUIET PLEASE');
        assert.equal(reply!.chat.id, mine.chat.id);
      } finally {
        bot.stop('test over');
      }
    });
  });
}
