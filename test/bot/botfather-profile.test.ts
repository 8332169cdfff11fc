import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '@grammyjs/types';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

type Marked = Message.TextMessage & { reply_markup?: Record<string, unknown> };

for (const { kind, skip } of await databaseKinds()) {
  describe(`BotFather's /setname, /setdescription, /setabouttext, /setcommands, /mybots (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let alice: ChatApi;
    let bob: ChatApi;
    let token: string;
    before(async () => {
      server = await startBotServer({ db: kind });
      alice = new ChatApi(server.botUrl, await signedInPerson(server, 'alice'));
      bob = new ChatApi(server.botUrl, await signedInPerson(server, 'bob'));
      token = await botViaBotFather(alice, 'Weather', 'wx_profile_bot');
      await botViaBotFather(bob, 'Bob Bot', 'bobs_profile_bot');
    });
    after(() => server.close());

    /** Sends a line and returns BotFather's last answer with its markup. */
    async function askFull(chat: ChatApi, text: string): Promise<Marked> {
      const mine = await chat.send('BotFather', text);
      const answers = await chat.replies('BotFather', mine.message_id);
      assert.ok(answers.length, `no answer to ${text}`);
      return answers.at(-1) as Marked;
    }

    const call = async (method: string, params: Record<string, unknown> = {}) => {
      const r = await botApi(server.botUrl, token, method, params);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body.result as Record<string, unknown>;
    };

    it('offers the person\'s bots as a reply keyboard of @usernames, then removes it', async () => {
      const ask = await askFull(alice, '/setname');
      assert.match(ask.text, /Choose a bot to change its name/);
      assert.deepEqual(ask.reply_markup, { keyboard: [[{ text: '@wx_profile_bot' }]], one_time_keyboard: true, resize_keyboard: true });
      const next = await askFull(alice, '@wx_profile_bot');
      assert.match(next.text, /Send me the new name/);
      assert.deepEqual(next.reply_markup, { remove_keyboard: true });
      assert.match((await askFull(alice, '/cancel')).text, /\/setname has been cancelled/);
    });

    it('/setname stores through setMyName: getMyName answers the new name', async () => {
      await alice.ask('BotFather', '/setname');
      await alice.ask('BotFather', 'WX_PROFILE_BOT');
      assert.match(await alice.ask('BotFather', 'x'.repeat(65)), /too long: at most 64 characters/);
      assert.match(await alice.ask('BotFather', '/empty'), /must have a name/);
      assert.match(await alice.ask('BotFather', 'Weather Reports'), /Success! Name updated/);
      assert.deepEqual(await call('getMyName'), { name: 'Weather Reports' });
      assert.match(await alice.ask('BotFather', 'Another'), /Send \/newbot/, 'the conversation ended');
    });

    it('/setdescription and /setabouttext store through setMyDescription and setMyShortDescription, /empty clears', async () => {
      await alice.ask('BotFather', '/setdescription');
      assert.match(await alice.ask('BotFather', 'wx_profile_bot'), /'What can this bot do\?'/);
      assert.match(await alice.ask('BotFather', 'd'.repeat(513)), /too long: at most 512/);
      assert.match(await alice.ask('BotFather', 'Forecasts for your town.'), /Success! Description updated/);
      assert.deepEqual(await call('getMyDescription'), { description: 'Forecasts for your town.' });

      await alice.ask('BotFather', '/setabouttext');
      assert.match(await alice.ask('BotFather', '@wx_profile_bot'), /'About' text/);
      assert.match(await alice.ask('BotFather', 'a'.repeat(121)), /too long: at most 120/);
      assert.match(await alice.ask('BotFather', 'Weather, daily.'), /Success! About section updated/);
      assert.deepEqual(await call('getMyShortDescription'), { short_description: 'Weather, daily.' });

      await alice.ask('BotFather', '/setdescription');
      await alice.ask('BotFather', 'wx_profile_bot');
      assert.match(await alice.ask('BotFather', '/empty'), /Success! Description updated/);
      assert.deepEqual(await call('getMyDescription'), { description: '' });

      // The Bot API's value is BotFather's to show, and the other way round.
      await call('setMyDescription', { description: 'Set by the bot.' });
      await alice.ask('BotFather', '/mybots');
      const summary = await alice.ask('BotFather', '@wx_profile_bot');
      assert.match(summary, /Weather Reports @wx_profile_bot/);
      assert.match(summary, /About: Weather, daily\./);
      assert.match(summary, /Description: Set by the bot\./);
    });

    it('/setcommands takes command - description lines, validated like setMyCommands', async () => {
      await alice.ask('BotFather', '/setcommands');
      assert.match(await alice.ask('BotFather', 'wx_profile_bot'), /command1 - Description/);
      assert.match(await alice.ask('BotFather', 'start - Start\nno dash here'), /line 2 is not in the right format/);
      assert.match(await alice.ask('BotFather', 'Start - Start'), /only lowercase English letters/);
      assert.match(await alice.ask('BotFather', `${'c'.repeat(33)} - Too long`), /command length must not exceed 32/);
      assert.match(await alice.ask('BotFather', `start - ${'d'.repeat(257)}`), /description length must not exceed 256/);
      const many = Array.from({ length: 101 }, (_, i) => `c${i} - Command ${i}`).join('\n');
      assert.match(await alice.ask('BotFather', many), /at most 100 commands/);
      // A leading slash is the list, not a command for BotFather.
      assert.match(await alice.ask('BotFather', '/start - Start the bot\n\nforecast – Today\'s forecast'), /Success! Command list updated/);
      assert.deepEqual(await call('getMyCommands'), [{ command: 'start', description: 'Start the bot' }, { command: 'forecast', description: "Today's forecast" }]);
      assert.match(await alice.ask('BotFather', '/mybots'), /Choose a bot from the list below/);
      assert.match(await alice.ask('BotFather', 'wx_profile_bot'), /Commands: \/start \/forecast/);

      await alice.ask('BotFather', '/setcommands');
      await alice.ask('BotFather', 'wx_profile_bot');
      assert.match(await alice.ask('BotFather', '/empty'), /Success! Command list updated/);
      assert.deepEqual(await call('getMyCommands'), []);

      await alice.ask('BotFather', '/setcommands');
      await alice.ask('BotFather', 'wx_profile_bot');
      assert.match(await alice.ask('BotFather', '/cancel'), /\/setcommands has been cancelled/);
      assert.match(await alice.ask('BotFather', 'start - Start'), /Send \/newbot/);
      assert.deepEqual(await call('getMyCommands'), []);
    });

    it('refuses an unknown bot and someone else\'s bot, and keeps asking', async () => {
      for (const command of ['/setname', '/setdescription', '/setabouttext', '/setcommands', '/mybots']) {
        await alice.ask('BotFather', command);
        assert.match(await alice.ask('BotFather', '@no_such_bot'), /Invalid bot selected/);
        const refused = await askFull(alice, 'bobs_profile_bot');
        assert.match(refused.text, /Invalid bot selected/);
        assert.deepEqual(refused.reply_markup?.keyboard, [[{ text: '@wx_profile_bot' }]]);
        assert.match(await alice.ask('BotFather', '/cancel'), /has been cancelled/);
      }
      // Bob's bot is unchanged.
      await bob.ask('BotFather', '/mybots');
      assert.match(await bob.ask('BotFather', 'bobs_profile_bot'), /Bob Bot @bobs_profile_bot[\s\S]*Commands: \(none\)/);
    });

    it('a person with no bots is told to create one', async () => {
      const carol = new ChatApi(server.botUrl, await signedInPerson(server, 'carol'));
      for (const command of ['/setname', '/setcommands', '/mybots']) assert.match(await carol.ask('BotFather', command), /no bots/);
    });
  });
}
