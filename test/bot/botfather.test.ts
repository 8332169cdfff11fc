import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, signedInPerson, startBotServer, type BotTestServer } from './support.js';

const TOKEN = /(?<![0-9])(\d+):([A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])/;

for (const { kind, skip } of await databaseKinds()) {
  describe(`BotFather over the chat client API (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let chat: ChatApi;
    before(async () => {
      server = await startBotServer({ db: kind });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'alice'));
    });
    after(() => server.close());

    it('creates a bot whose token works with getMe', async () => {
      const chats = await (await fetch(`${server.botUrl}/client/chats`, { headers: { authorization: `Bearer ${(chat as unknown as { person: { token: string } }).person.token}` } })).json() as { chats: { bot: { username: string } }[] };
      assert.equal(chats.chats[0]!.bot.username, 'BotFather');

      assert.match(await chat.ask('BotFather', '/start'), /\/newbot/);
      assert.match(await chat.ask('BotFather', '/newbot'), /choose a name/);
      assert.match(await chat.ask('BotFather', 'Weather Reports'), /choose a username/);
      assert.match(await chat.ask('BotFather', 'weather'), /must end in 'bot'/);
      assert.match(await chat.ask('BotFather', 'wx-bot'), /invalid/);
      assert.match(await chat.ask('BotFather', 'abot'), /invalid/);
      const done = await chat.ask('BotFather', 'Weather_Alice_bot');
      const m = TOKEN.exec(done);
      assert.ok(m, done);
      const token = m[0];

      const me = await botApi(server.botUrl, token, 'getMe');
      assert.equal(me.status, 200);
      assert.deepEqual(
        { ok: me.body.ok, id: (me.body.result as Record<string, unknown>).id, username: (me.body.result as Record<string, unknown>).username, is_bot: (me.body.result as Record<string, unknown>).is_bot, first_name: (me.body.result as Record<string, unknown>).first_name },
        { ok: true, id: Number(m[1]), username: 'Weather_Alice_bot', is_bot: true, first_name: 'Weather Reports' },
      );

      // Usernames are unique regardless of case.
      await chat.ask('BotFather', '/newbot');
      await chat.ask('BotFather', 'Copy');
      assert.match(await chat.ask('BotFather', 'weather_alice_BOT'), /already taken/);
      assert.match(await chat.ask('BotFather', '/cancel'), /\/newbot has been cancelled/);
      assert.match(await chat.ask('BotFather', '/cancel'), /No active command/);

      assert.match(await chat.ask('BotFather', '/mybots'), /@Weather_Alice_bot/);

      // /revoke: a new token; the old one stops working.
      assert.match(await chat.ask('BotFather', '/revoke'), /Choose a bot/);
      const revoked = await chat.ask('BotFather', '@weather_alice_bot');
      const fresh = TOKEN.exec(revoked)?.[0];
      assert.ok(fresh && fresh !== token, revoked);
      assert.equal((await botApi(server.botUrl, token, 'getMe')).status, 401);
      assert.equal((await botApi(server.botUrl, fresh, 'getMe')).status, 200);

      // /token issues a new token too (only hashes are kept).
      await chat.ask('BotFather', '/token');
      const again = TOKEN.exec(await chat.ask('BotFather', 'Weather_Alice_bot'))?.[0];
      assert.ok(again && again !== fresh);

      // Tokens are stored only as hashes, and BotFather's copy is redacted once read.
      const rows = await chat.messages('BotFather');
      assert.ok(!rows.some((r) => TOKEN.test(r.text)), 'token still readable in the chat history');

      // /deletebot asks for the exact sentence.
      assert.match(await chat.ask('BotFather', '/deletebot'), /Choose a bot to delete/);
      assert.match(await chat.ask('BotFather', 'Weather_Alice_bot'), /Yes, I am totally sure\./);
      assert.match(await chat.ask('BotFather', 'yes'), /exactly like this/);
      assert.match(await chat.ask('BotFather', 'Yes, I am totally sure.'), /gone/);
      assert.equal((await botApi(server.botUrl, again, 'getMe')).status, 401);
      assert.match(await chat.ask('BotFather', '/mybots'), /no bots/);
      assert.match(await chat.ask('BotFather', '/frobnicate'), /Unrecognized command/);
    });
  });
}
