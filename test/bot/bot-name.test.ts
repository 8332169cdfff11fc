/**
 * A bot's name set through BotFather's /setname (or setMyName for the
 * default language) is the name getMe answers as `first_name` and its
 * messages carry, at once and in every process (Telegram answers the new
 * one); a name for one language only changes getMyName for that language.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`the bot's name in getMe (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let twin: RunningGatehouse | undefined;
    let chat: ChatApi;
    let token: string;
    before(async () => {
      server = await startBotServer({ db: kind });
      // A second process on the same database (PostgreSQL), with its own bot cache.
      if (kind === 'postgres') {
        twin = await startGatehouse(loadConfig({ GATEHOUSE_DATABASE_URL: server.databaseUrl, GATEHOUSE_ROLES: 'bot', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent' }));
      }
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'nora'));
      token = await botViaBotFather(chat, 'Weather', 'wx_name_bot');
    });
    after(async () => {
      await twin?.close();
      await server.close();
    });

    const me = async (base: string) => {
      const r = await botApi(base, token, 'getMe');
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.result as { first_name: string }).first_name;
    };
    const bases = () => [server.botUrl, ...(twin ? [twin.bot!.url] : [])];

    it('/setname: getMe and the bot\'s messages answer the new name at once, in every process', async () => {
      for (const base of bases()) assert.equal(await me(base), 'Weather');
      await chat.ask('BotFather', '/setname');
      await chat.ask('BotFather', 'wx_name_bot');
      assert.match(await chat.ask('BotFather', 'Weather Reports'), /Success! Name updated/);
      for (const base of bases()) assert.equal(await me(base), 'Weather Reports', base);
      const hello = await chat.send('wx_name_bot', 'hi');
      const updates = await botApi(server.botUrl, token, 'getUpdates', {});
      const chatId = (updates.body.result as { message: { chat: { id: number } } }[]).at(-1)!.message.chat.id;
      const sent = await botApi(server.botUrl, token, 'sendMessage', { chat_id: chatId, text: 'sunny' });
      assert.equal((sent.body.result as { from: { first_name: string } }).from.first_name, 'Weather Reports');
      const [shown] = await chat.replies('wx_name_bot', hello.message_id);
      assert.equal(shown!.from!.first_name, 'Weather Reports');
    });

    it('setMyName for the default language renames; for one language only getMyName in it changes', async () => {
      assert.equal((await botApi(server.botUrl, token, 'setMyName', { name: 'Forecast' })).status, 200);
      for (const base of bases()) assert.equal(await me(base), 'Forecast');
      assert.equal((await botApi(server.botUrl, token, 'setMyName', { name: 'Wetter', language_code: 'de' })).status, 200);
      assert.equal(await me(server.botUrl), 'Forecast');
      assert.deepEqual((await botApi(server.botUrl, token, 'getMyName', { language_code: 'de' })).body.result, { name: 'Wetter' });
      // Removing the default name keeps the last one: a bot always has a name.
      assert.equal((await botApi(server.botUrl, token, 'setMyName', { name: '' })).status, 200);
      assert.equal(await me(server.botUrl), 'Forecast');
    });
  });
}
