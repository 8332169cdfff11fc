import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Message } from '@grammyjs/types';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

type Body = Record<string, unknown>;
type Shown = Message & { reply_markup?: unknown; deleted?: true; edit_date?: number };

/** reply_markup's bad values, reply keyboards, and edits as the person's long poll sees them. */
describe('keyboards and edits', () => {
  let server: BotTestServer;
  let chat: ChatApi;
  let token: string;
  let chatId: number;
  const call = (method: string, params: Body = {}) => botApi(server.botUrl, token, method, params);
  const refused = async (method: string, params: Body, description: string) => {
    const r = await call(method, params);
    assert.deepEqual(r, { status: 400, body: { ok: false, error_code: 400, description } }, JSON.stringify(params));
  };
  const send = async (params: Body) => {
    const r = await call('sendMessage', { chat_id: chatId, text: 'x', ...params });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.result as Shown;
  };
  /** The person's messages as the chat client API shows them. */
  const poll = async (after: number, timeout = 0) => {
    const res = await fetch(`${server.botUrl}/client/chats/keys_raw_bot/messages?after=${after}&timeout=${timeout}`, { headers: { authorization: `Bearer ${person.token}` } });
    assert.equal(res.status, 200);
    return ((await res.json()) as { messages: Shown[] }).messages;
  };
  let person: { token: string; username: string };

  before(async () => {
    server = await startBotServer();
    person = await signedInPerson(server, 'kim');
    chat = new ChatApi(server.botUrl, person);
    token = await botViaBotFather(chat, 'Keys', 'keys_raw_bot');
    chatId = (await chat.send('keys_raw_bot', '/start')).chat.id;
  });
  after(() => server.close());

  it('refuses malformed reply_markup with the Bot API descriptions', async () => {
    const button = (b: unknown) => ({ inline_keyboard: [[b]] });
    const cases: [unknown, string][] = [
      ['{not json', "Bad Request: can't parse reply keyboard markup JSON object"],
      ['[1]', 'Bad Request: object expected as reply markup'],
      [[], 'Bad Request: object expected as reply markup'],
      [7, 'Bad Request: object expected as reply markup'],
      [{ inline_keyboard: 'x' }, 'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array'],
      [{ inline_keyboard: [1] }, 'Bad Request: field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'],
      [button(1), "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must be an Object"],
      [button(null), "Bad Request: can't parse inline keyboard button: InlineKeyboardButton must be an Object"],
      [button({ callback_data: 'x' }), 'Bad Request: can\'t parse inline keyboard button: Can\'t find field "text"'],
      [button({ text: 1, callback_data: 'x' }), 'Bad Request: can\'t parse inline keyboard button: Field "text" must be of type String'],
      [button({ text: 'a' }), "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"],
      [button({ text: 'a', unknown: 1 }), "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"],
      [button({ text: 'a', callback_data: '' }), 'Bad Request: BUTTON_DATA_INVALID'],
      [button({ text: 'a', callback_data: 'x'.repeat(65) }), 'Bad Request: BUTTON_DATA_INVALID'],
      [button({ text: 'a', callback_data: 'é'.repeat(33) }), 'Bad Request: BUTTON_DATA_INVALID'],
      [button({ text: 'a', callback_data: 5 }), 'Bad Request: can\'t parse inline keyboard button: Field "callback_data" must be of type String'],
      [button({ text: 'a', url: 5 }), 'Bad Request: can\'t parse inline keyboard button: Field "url" must be of type String'],
      [button({ text: 'a', url: 'ftp://example.com/' }), 'Bad Request: BUTTON_URL_INVALID'],
      [button({ text: 'a', url: 'javascript:alert(1)' }), 'Bad Request: BUTTON_URL_INVALID'],
      [button({ text: 'a', web_app: 'https://example.com/' }), 'Bad Request: can\'t parse inline keyboard button: Field "web_app" must be of type Object'],
      [button({ text: 'a', web_app: { url: 'http://example.com/' } }), 'Bad Request: BUTTON_URL_INVALID'],
      [{ keyboard: 'x' }, 'Bad Request: field "keyboard" of the ReplyKeyboardMarkup must be an Array'],
      [{ keyboard: ['a'] }, 'Bad Request: field "keyboard" of the ReplyKeyboardMarkup must be an Array of Arrays'],
      [{ keyboard: [[1]] }, "Bad Request: can't parse keyboard button: KeyboardButton must be a String or an Object"],
      [{ keyboard: [[{ request_contact: true }]] }, 'Bad Request: can\'t parse keyboard button: Can\'t find field "text"'],
      [{ keyboard: [['a']], resize_keyboard: 'yes' }, 'Bad Request: field "resize_keyboard" of the ReplyKeyboardMarkup must be of the type Boolean'],
      [{ remove_keyboard: 1 }, 'Bad Request: field "remove_keyboard" of the ReplyKeyboardRemove must be of the type Boolean'],
      [{ force_reply: 'true' }, 'Bad Request: field "force_reply" of the ForceReply must be of the type Boolean'],
      [{ force_reply: true, input_field_placeholder: 'p'.repeat(65) }, 'Bad Request: input field placeholder is too long'],
    ];
    for (const [reply_markup, description] of cases) await refused('sendMessage', { chat_id: chatId, text: 'hi', reply_markup }, description);
    // Markup is read before the chat is looked up.
    await refused('sendMessage', { chat_id: 42, text: 'hi', reply_markup: '{' }, "Bad Request: can't parse reply keyboard markup JSON object");
    // 64 bytes of callback data are allowed; an empty keyboard is no keyboard; unknown fields are dropped.
    const ok = await send({ reply_markup: button({ text: 'a', callback_data: 'é'.repeat(32), color: 'red' }) });
    assert.deepEqual(ok.reply_markup, { inline_keyboard: [[{ text: 'a', callback_data: 'é'.repeat(32) }]] });
    assert.equal((await send({ reply_markup: { inline_keyboard: [[]] } })).reply_markup, undefined);
  });

  it('takes reply_markup as JSON text from a form, as node-telegram-bot-api sends it', async () => {
    const res = await fetch(`${server.botUrl}/bot${token}/sendMessage`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ chat_id: String(chatId), text: 'form', reply_markup: JSON.stringify({ inline_keyboard: [[{ text: 'Go', url: 'https://example.com/go' }]] }) }),
    });
    const body = (await res.json()) as { result: Shown };
    assert.deepEqual(body.result.reply_markup, { inline_keyboard: [[{ text: 'Go', url: 'https://example.com/go' }]] });
  });

  it('shows reply keyboards, their removal and forced replies to the person, not in the bot\'s Message', async () => {
    const kinds: [Body, unknown][] = [
      [{ keyboard: [['Yes', { text: 'No' }], [{ text: 'Share', request_contact: true }]], one_time_keyboard: true, resize_keyboard: true, input_field_placeholder: 'Pick' },
        { keyboard: [[{ text: 'Yes' }, { text: 'No' }], [{ text: 'Share', request_contact: true }]], resize_keyboard: true, one_time_keyboard: true, input_field_placeholder: 'Pick' }],
      [{ remove_keyboard: true }, { remove_keyboard: true }],
      [{ force_reply: true, input_field_placeholder: 'Your name' }, { force_reply: true, input_field_placeholder: 'Your name' }],
    ];
    for (const [markup, shown] of kinds) {
      const sent = await send({ reply_markup: markup });
      assert.equal(sent.reply_markup, undefined);
      const [seen] = await poll(sent.message_id - 1);
      assert.deepEqual(seen!.reply_markup, shown);
    }
    // The person's answer to a reply keyboard is a plain message to the bot.
    await call('getUpdates', { offset: -1 });
    const answer = await chat.send('keys_raw_bot', 'Yes');
    const updates = (await call('getUpdates', { offset: -1 })).body.result as { message: Message.TextMessage }[];
    assert.equal(updates.at(-1)!.message.text, 'Yes');
    assert.equal(updates.at(-1)!.message.message_id, answer.message_id);
  });

  it('edits text and buttons; edit_date only for text; a poll that started before sees edits and deletions', async () => {
    const keyboard = { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] };
    const m = await send({ text: 'first', reply_markup: keyboard });
    const last = m.message_id;

    // Buttons only: edit_date stays absent; the poll waiting since before sees the new buttons.
    const waiting = poll(last, 10);
    await new Promise((r) => setTimeout(r, 200));
    const buttons = { inline_keyboard: [[{ text: 'B', callback_data: 'b' }]] };
    const edited = (await call('editMessageReplyMarkup', { chat_id: chatId, message_id: last, reply_markup: buttons })).body.result as Shown;
    assert.deepEqual(edited.reply_markup, buttons);
    assert.equal(edited.edit_date, undefined);
    const [seen] = await waiting;
    assert.equal(seen!.message_id, last);
    assert.deepEqual(seen!.reply_markup, buttons);
    assert.equal(seen!.edit_date, undefined);
    await refused('editMessageReplyMarkup', { chat_id: chatId, message_id: last, reply_markup: buttons },
      'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');

    // Text with no markup given: the inline keyboard goes, edit_date is set.
    const waiting2 = poll(last, 10);
    await new Promise((r) => setTimeout(r, 200));
    const text = (await call('editMessageText', { chat_id: chatId, message_id: last, text: '*done*', parse_mode: 'MarkdownV2' })).body.result as Shown;
    assert.equal(text.reply_markup, undefined);
    assert.ok(text.edit_date! >= m.date);
    const [seen2] = await waiting2;
    assert.equal((seen2 as Message.TextMessage).text, 'done');
    assert.equal(seen2!.reply_markup, undefined);
    assert.equal(seen2!.edit_date, text.edit_date);

    // Markup removed by an empty keyboard, then buttons back with the same text: edit_date is kept from the text edit.
    const back = (await call('editMessageReplyMarkup', { chat_id: chatId, message_id: last, reply_markup: keyboard })).body.result as Shown;
    assert.equal(back.edit_date, text.edit_date);
    const removed = (await call('editMessageReplyMarkup', { chat_id: chatId, message_id: last })).body.result as Shown;
    assert.equal(removed.reply_markup, undefined);

    // Deleted while a poll waits: the poll answers the deletion.
    const waiting3 = poll(last, 10);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual((await call('deleteMessage', { chat_id: chatId, message_id: last })).body, { ok: true, result: true });
    const [gone] = await waiting3;
    assert.deepEqual(gone, { message_id: last, chat: gone!.chat, deleted: true });
    assert.equal(gone!.chat.id, chatId);
  });

  it('refuses bad edit values', async () => {
    const m = await send({ text: 'to edit', reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] } });
    const mine = await chat.send('keys_raw_bot', 'person text');
    const id = m.message_id;
    await refused('editMessageReplyMarkup', { chat_id: chatId, message_id: id, reply_markup: { keyboard: [['x']] } }, 'Bad Request: inline keyboard expected');
    await refused('editMessageText', { chat_id: chatId, message_id: id, text: 'new', reply_markup: { remove_keyboard: true } }, 'Bad Request: inline keyboard expected');
    await refused('editMessageReplyMarkup', { chat_id: chatId, message_id: id, reply_markup: '{' }, "Bad Request: can't parse reply keyboard markup JSON object");
    await refused('editMessageReplyMarkup', { chat_id: chatId, message_id: 99999 }, 'Bad Request: message to edit not found');
    await refused('editMessageReplyMarkup', { chat_id: chatId }, 'Bad Request: message identifier is not specified');
    await refused('editMessageReplyMarkup', { message_id: id }, 'Bad Request: chat_id is empty');
    await refused('editMessageReplyMarkup', { inline_message_id: 'abc' }, 'Bad Request: message to edit not found');
    await refused('editMessageReplyMarkup', { chat_id: chatId, message_id: mine.message_id, reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] } }, "Bad Request: message can't be edited");
    await refused('editMessageText', { chat_id: chatId, message_id: id, text: 'to edit', reply_markup: { inline_keyboard: [[{ text: 'A', callback_data: 'a' }]] } },
      'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
    // Same text, other buttons: modified.
    const other = await call('editMessageText', { chat_id: chatId, message_id: id, text: 'to edit', reply_markup: { inline_keyboard: [[{ text: 'Z', callback_data: 'z' }]] } });
    assert.equal(other.status, 200);
    await refused('editMessageCaption', { chat_id: chatId, message_id: id, caption: 'c' }, 'Bad Request: there is no caption in the message to edit');
    await refused('editMessageCaption', { chat_id: chatId, message_id: id, caption: 'c'.repeat(1025) }, 'Bad Request: message caption is too long');
    await refused('editMessageCaption', { chat_id: chatId, message_id: id, reply_markup: { force_reply: true } }, 'Bad Request: inline keyboard expected');
  });
});
