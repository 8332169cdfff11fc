import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '@grammyjs/types';
import { Bot } from 'grammy';
import { Telegraf } from 'telegraf';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

type Body = Record<string, unknown>;
type Shown = Message.TextMessage & { forward_origin?: Body; has_protected_content?: true; link_preview_options?: Body };

/** Commands, the bot's name and descriptions, chat actions, members, forwards and copies, with unmodified grammY and telegraf. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`commands, profile, forwards and copies (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let bob: ChatApi;
    let alice: ChatApi;
    before(async () => {
      server = await startBotServer({ db: kind });
      bob = new ChatApi(server.botUrl, await signedInPerson(server, 'bob'));
      alice = new ChatApi(server.botUrl, await signedInPerson(server, 'alice'));
    });
    after(() => server.close());

    it('grammY sets, reads and deletes commands by scope and language, and its name and descriptions', async () => {
      const token = await botViaBotFather(bob, 'Helper', 'helper_grammy_bot');
      const api = new Bot(token, { client: { apiRoot: server.botUrl } }).api;
      const chatId = (await bob.send('helper_grammy_bot', '/start')).chat.id;
      const all = [{ command: 'start', description: 'Start' }, { command: 'help', description: 'Help' }];
      assert.equal(await api.setMyCommands(all), true);
      assert.equal(await api.setMyCommands([{ command: 'hilfe', description: 'Hilfe' }], { language_code: 'de' }), true);
      assert.equal(await api.setMyCommands([{ command: 'admin', description: 'Only for bob' }], { scope: { type: 'chat', chat_id: chatId } }), true);
      assert.deepEqual(await api.getMyCommands(), all);
      assert.deepEqual(await api.getMyCommands({ language_code: 'de' }), [{ command: 'hilfe', description: 'Hilfe' }]);
      assert.deepEqual(await api.getMyCommands({ scope: { type: 'chat', chat_id: chatId } }), [{ command: 'admin', description: 'Only for bob' }]);
      assert.deepEqual(await api.getMyCommands({ scope: { type: 'chat', chat_id: '@bob' } }), [{ command: 'admin', description: 'Only for bob' }]);
      assert.deepEqual(await api.getMyCommands({ scope: { type: 'all_private_chats' } }), []);
      assert.equal(await api.deleteMyCommands({ language_code: 'de' }), true);
      assert.deepEqual(await api.getMyCommands({ language_code: 'de' }), []);
      // An empty list deletes too; the default list is still there.
      assert.equal(await api.setMyCommands([], { scope: { type: 'chat', chat_id: chatId } }), true);
      assert.deepEqual(await api.getMyCommands({ scope: { type: 'chat', chat_id: chatId } }), []);
      assert.deepEqual(await api.getMyCommands(), all);

      assert.deepEqual(await api.getMyName(), { name: 'Helper' });
      assert.equal(await api.setMyName('Helfer', { language_code: 'de' }), true);
      assert.deepEqual(await api.getMyName({ language_code: 'de' }), { name: 'Helfer' });
      assert.deepEqual(await api.getMyName({ language_code: 'fr' }), { name: 'Helper' });
      assert.equal(await api.setMyDescription('What this bot can do'), true);
      assert.equal(await api.setMyDescription('Was er kann', { language_code: 'de' }), true);
      assert.deepEqual(await api.getMyDescription({ language_code: 'de' }), { description: 'Was er kann' });
      assert.deepEqual(await api.getMyDescription({ language_code: 'fr' }), { description: 'What this bot can do' });
      assert.equal(await api.setMyDescription('', { language_code: 'de' }), true);
      assert.deepEqual(await api.getMyDescription({ language_code: 'de' }), { description: 'What this bot can do' });
      assert.deepEqual(await api.getMyShortDescription(), { short_description: '' });
      assert.equal(await api.setMyShortDescription('Short'), true);
      assert.deepEqual(await api.getMyShortDescription(), { short_description: 'Short' });
    });

    it('telegraf forwards and copies between its chats, sends chat actions and reads members; protected content stays', async () => {
      const token = await botViaBotFather(bob, 'Relay', 'relay_telegraf_bot');
      const tg = new Telegraf(token, { telegram: { apiRoot: server.botUrl } }).telegram;
      const fromBob = await bob.send('relay_telegraf_bot', 'note from bob');
      const aliceChat = (await alice.send('relay_telegraf_bot', '/start')).chat.id;
      const bobChat = fromBob.chat.id;

      const forwarded = (await tg.forwardMessage(aliceChat, bobChat, fromBob.message_id)) as unknown as Shown;
      assert.equal(forwarded.text, 'note from bob');
      assert.equal(forwarded.chat.id, aliceChat);
      assert.deepEqual(forwarded.forward_origin, { type: 'user', date: fromBob.date, sender_user: fromBob.from });
      const [seen] = (await alice.replies('relay_telegraf_bot', 1)) as Shown[];
      assert.equal(seen!.message_id, forwarded.message_id);
      assert.deepEqual(seen!.forward_origin, forwarded.forward_origin);
      // Forwarded again, it names its first origin.
      const again = (await tg.forwardMessage(bobChat, aliceChat, forwarded.message_id)) as unknown as Shown;
      assert.deepEqual(again.forward_origin, forwarded.forward_origin);

      const copy = await tg.copyMessage(aliceChat, bobChat, fromBob.message_id, { reply_markup: { inline_keyboard: [[{ text: 'Open', url: 'https://example.com/' }]] } });
      assert.deepEqual(Object.keys(copy), ['message_id']);
      const copied = (await alice.messages('relay_telegraf_bot', copy.message_id - 1)) as Shown[];
      assert.equal(copied[0]!.text, 'note from bob');
      assert.equal(copied[0]!.forward_origin, undefined);
      assert.deepEqual((copied[0] as { reply_markup?: unknown }).reply_markup, { inline_keyboard: [[{ text: 'Open', url: 'https://example.com/' }]] });

      const secret = (await tg.sendMessage(bobChat, 'see https://example.com/', { protect_content: true, link_preview_options: { is_disabled: true } })) as unknown as Shown;
      assert.equal(secret.has_protected_content, true);
      assert.deepEqual(secret.link_preview_options, { is_disabled: true });
      await assert.rejects(tg.forwardMessage(aliceChat, bobChat, secret.message_id), /message has protected content and can't be forwarded/);
      await assert.rejects(tg.copyMessage(aliceChat, bobChat, secret.message_id), /message has protected content and can't be forwarded/);

      assert.equal(await tg.sendChatAction(bobChat, 'typing'), true);
      const member = await tg.getChatMember(bobChat, bobChat);
      assert.equal(member.status, 'member');
      assert.equal(member.user.username, 'bob');
      assert.equal((await tg.getChatMember(bobChat, Number(token.split(':')[0]))).user.is_bot, true);
      await assert.rejects(tg.getChatMember(bobChat, aliceChat), /Bad Request: member not found/);
    });
  });
}

describe('commands, profile, chat actions, forwards: bad values', () => {
  let server: BotTestServer;
  let token: string;
  let chatId: number;
  const refused = async (method: string, params: Body, description: string) => {
    const r = await botApi(server.botUrl, token, method, params);
    assert.deepEqual(r, { status: 400, body: { ok: false, error_code: 400, description } }, `${method} ${JSON.stringify(params)}`);
  };
  before(async () => {
    server = await startBotServer();
    const chat = new ChatApi(server.botUrl, await signedInPerson(server, 'dora'));
    token = await botViaBotFather(chat, 'Values', 'values_cmd_bot');
    chatId = (await chat.send('values_cmd_bot', '/start')).chat.id;
  });
  after(() => server.close());

  it('refuses them with the Bot API descriptions', async () => {
    const c = (command: unknown, description: unknown = 'd') => ({ commands: [{ command, description }] });
    const cases: [string, Body, string][] = [
      ['setMyCommands', { commands: '{' }, "Bad Request: can't parse commands JSON object"],
      ['setMyCommands', { commands: { command: 'a' } }, 'Bad Request: expected an Array of BotCommand'],
      ['setMyCommands', { commands: [1] }, 'Bad Request: expected BotCommand'],
      ['setMyCommands', c(1), 'Bad Request: field "command" must be of type String'],
      ['setMyCommands', c('a', null), 'Bad Request: field "description" must be of type String'],
      ['setMyCommands', c(''), 'Bad Request: command must be non-empty'],
      ['setMyCommands', c('a'.repeat(33)), 'Bad Request: command length must not exceed 32'],
      ['setMyCommands', c('a', ' '), 'Bad Request: command description must be non-empty'],
      ['setMyCommands', c('a', 'd'.repeat(257)), 'Bad Request: command description length must not exceed 256'],
      ['setMyCommands', c('Start'), 'Bad Request: BOT_COMMAND_INVALID'],
      ['setMyCommands', c('do-it'), 'Bad Request: BOT_COMMAND_INVALID'],
      ['setMyCommands', { commands: Array.from({ length: 101 }, (_, i) => ({ command: `c${i}`, description: 'd' })) }, 'Bad Request: BOT_COMMANDS_TOO_MUCH'],
      ['setMyCommands', { ...c('a'), language_code: 'deu' }, 'Bad Request: invalid language code specified'],
      ['getMyCommands', { language_code: 7 }, 'Bad Request: field "language_code" must be of type String'],
      ['getMyCommands', { scope: '{' }, "Bad Request: can't parse BotCommandScope JSON object"],
      ['getMyCommands', { scope: [] }, "Bad Request: can't parse BotCommandScope JSON object"],
      ['getMyCommands', { scope: { type: 'everyone' } }, 'Bad Request: unsupported bot command scope type'],
      ['getMyCommands', { scope: { type: 'chat' } }, 'Bad Request: chat_id is empty'],
      ['getMyCommands', { scope: { type: 'chat', chat_id: 123 } }, 'Bad Request: chat not found'],
      ['deleteMyCommands', { scope: { type: 'chat_administrators', chat_id: 1 } }, "Bad Request: can't use specified scope in private chats"],
      ['deleteMyCommands', { scope: { type: 'chat_member', chat_id: 1, user_id: 'x' } }, 'Bad Request: invalid user_id specified'],
      ['setMyName', { name: 'n'.repeat(65) }, 'Bad Request: bot name is too long'],
      ['setMyName', { name: 'ok', language_code: 'english' }, 'Bad Request: invalid language code specified'],
      ['setMyDescription', { description: 'd'.repeat(513) }, 'Bad Request: bot description is too long'],
      ['setMyShortDescription', { short_description: 's'.repeat(121) }, 'Bad Request: bot short description is too long'],
      ['sendChatAction', { chat_id: chatId, action: 'dancing' }, 'Bad Request: wrong parameter action in request'],
      ['sendChatAction', { chat_id: chatId }, 'Bad Request: wrong parameter action in request'],
      ['sendChatAction', { action: 'typing' }, 'Bad Request: chat_id is empty'],
      ['sendChatAction', { chat_id: 5, action: 'typing' }, 'Bad Request: chat not found'],
      ['getChatMember', { chat_id: chatId }, 'Bad Request: invalid user_id specified'],
      ['getChatMember', { chat_id: chatId, user_id: 12345 }, 'Bad Request: member not found'],
      ['forwardMessage', { chat_id: chatId, message_id: 1 }, 'Bad Request: from_chat_id is empty'],
      ['forwardMessage', { from_chat_id: chatId, message_id: 1 }, 'Bad Request: chat_id is empty'],
      ['forwardMessage', { chat_id: chatId, from_chat_id: chatId }, 'Bad Request: message to forward not found'],
      ['forwardMessage', { chat_id: chatId, from_chat_id: chatId, message_id: 999 }, 'Bad Request: message to forward not found'],
      ['forwardMessage', { chat_id: 5, from_chat_id: chatId, message_id: 1 }, 'Bad Request: chat not found'],
      ['copyMessage', { chat_id: chatId, from_chat_id: chatId, message_id: 999 }, 'Bad Request: message to copy not found'],
      ['copyMessage', { chat_id: chatId, from_chat_id: chatId, message_id: 1, reply_markup: '{' }, "Bad Request: can't parse reply keyboard markup JSON object"],
      ['copyMessage', { chat_id: chatId, from_chat_id: chatId, message_id: 1, reply_parameters: { message_id: 999 } }, 'Bad Request: message to be replied not found'],
      ['sendMessage', { chat_id: chatId, text: 'x', link_preview_options: '[' }, "Bad Request: can't parse link preview options JSON object"],
      ['sendMessage', { chat_id: chatId, text: 'x', link_preview_options: [] }, "Bad Request: can't parse link preview options JSON object"],
      ['sendMessage', { chat_id: chatId, text: 'x', link_preview_options: { is_disabled: 'yes' } }, 'Bad Request: field "is_disabled" must be of type Boolean'],
      ['sendMessage', { chat_id: chatId, text: 'x', link_preview_options: { url: 5 } }, 'Bad Request: field "url" must be of type String'],
    ];
    for (const [method, params, description] of cases) await refused(method, params, description);
    // Old action names are still taken, case-insensitively.
    assert.equal((await botApi(server.botUrl, token, 'sendChatAction', { chat_id: chatId, action: 'Record_Audio' })).status, 200);
  });
});
