import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

type Body = Record<string, unknown>;

for (const { kind, skip } of await databaseKinds()) {
  describe(`Bot API envelope, getUpdates and errors (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let chat: ChatApi;
    let token: string;
    let chatId: number;
    const call = (method: string, params: Body = {}) => botApi(server.botUrl, token, method, params);
    const expectError = async (method: string, params: Body, code: number, description: string | RegExp) => {
      const r = await call(method, params);
      assert.equal(r.status, code, JSON.stringify(r.body));
      assert.equal(r.body.ok, false);
      assert.equal(r.body.error_code, code);
      if (typeof description === 'string') assert.equal(r.body.description, description);
      else assert.match(String(r.body.description), description);
      return r;
    };

    before(async () => {
      server = await startBotServer({ db: kind, env: { GATEHOUSE_BOT_FLOOD_CHAT_BURST: '3', GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0.2' } });
      chat = new ChatApi(server.botUrl, await signedInPerson(server, 'carol'));
      token = await botViaBotFather(chat, 'Plain', 'plain_http_bot');
    });
    after(() => server.close());

    it('has no chat before the person writes, then one update with the chat id (spec §4 rule 8.3)', async () => {
      const empty = await call('getUpdates');
      assert.deepEqual(empty.body, { ok: true, result: [] });
      await expectError('sendMessage', { chat_id: 123456789, text: 'hi' }, 400, 'Bad Request: chat not found');
      await chat.send('plain_http_bot', '/start');
      await chat.send('plain_http_bot', 'second');
      const r = await call('getUpdates');
      const updates = r.body.result as { update_id: number; message: { chat: { id: number; type: string }; from: Body; text: string; date: number; message_id: number; entities?: Body[] } }[];
      assert.equal(updates.length, 2);
      assert.equal(updates[1]!.update_id, updates[0]!.update_id + 1);
      assert.ok(updates[0]!.update_id > 0);
      const m = updates[0]!.message;
      chatId = m.chat.id;
      assert.ok(Number.isSafeInteger(chatId) && chatId > 0);
      assert.equal(m.chat.type, 'private');
      assert.equal(m.from.id, chatId);
      assert.equal(m.from.is_bot, false);
      assert.equal(m.from.username, 'carol');
      assert.equal(m.text, '/start');
      assert.deepEqual(m.entities, [{ type: 'bot_command', offset: 0, length: 6 }]);
      assert.ok(Math.abs(m.date - Date.now() / 1000) < 60);

      // offset confirms everything below it; a negative offset keeps the last ones.
      const confirmed = await call('getUpdates', { offset: updates[1]!.update_id });
      assert.deepEqual((confirmed.body.result as { update_id: number }[]).map((u) => u.update_id), [updates[1]!.update_id]);
      await chat.send('plain_http_bot', 'third');
      const last = await call('getUpdates', { offset: -1 });
      assert.equal((last.body.result as unknown[]).length, 1);
      assert.equal((last.body.result as { message: { text: string } }[])[0]!.message.text, 'third');
      const limited = await call('getUpdates', { limit: 0 });
      assert.equal((limited.body.result as unknown[]).length, 1);
      const all = (last.body.result as { update_id: number }[])[0]!.update_id;
      assert.deepEqual((await call('getUpdates', { offset: all + 1 })).body.result, []);
    });

    it('long polling returns as soon as a message arrives; a newer poll ends the older with 409', async () => {
      const waiting = call('getUpdates', { timeout: 30 });
      await new Promise((r) => setTimeout(r, 100));
      const newer = call('getUpdates', { timeout: 30 });
      const older = await waiting;
      assert.equal(older.status, 409);
      assert.equal(older.body.description, 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running');
      await chat.send('plain_http_bot', 'wake up');
      const woke = await newer;
      assert.equal(woke.status, 200);
      const list = woke.body.result as { update_id: number; message: { text: string } }[];
      assert.equal(list[0]!.message.text, 'wake up');
      await call('getUpdates', { offset: list[list.length - 1]!.update_id + 1 });
    });

    it('sends, edits and deletes messages; getChat; parse modes', async () => {
      const sent = await call('sendMessage', { chat_id: chatId, text: '<b>bold</b> & <i>ok</i>', parse_mode: 'html', disable_notification: true });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      const msg = sent.body.result as { message_id: number; text: string; entities: Body[]; from: Body; chat: Body; date: number };
      assert.equal(msg.text, 'bold & ok');
      assert.deepEqual(msg.entities, [{ type: 'bold', offset: 0, length: 4 }, { type: 'italic', offset: 7, length: 2 }]);
      assert.equal(msg.from.is_bot, true);
      assert.equal(msg.chat.id, chatId);

      const byName = await call('sendMessage', { chat_id: '@carol', text: '*hi* _there_ 😀 \\!', parse_mode: 'MarkdownV2' });
      assert.deepEqual((byName.body.result as { entities: Body[] }).entities, [{ type: 'bold', offset: 0, length: 2 }, { type: 'italic', offset: 3, length: 5 }]);

      const edited = await call('editMessageText', { chat_id: chatId, message_id: msg.message_id, text: 'changed' });
      assert.equal((edited.body.result as { text: string }).text, 'changed');
      assert.ok((edited.body.result as { edit_date?: number }).edit_date);
      await expectError('editMessageText', { chat_id: chatId, message_id: msg.message_id, text: 'changed' }, 400, /^Bad Request: message is not modified/);
      await expectError('editMessageText', { chat_id: chatId, message_id: 999999, text: 'x' }, 400, 'Bad Request: message to edit not found');
      assert.deepEqual((await call('deleteMessage', { chat_id: chatId, message_id: msg.message_id })).body, { ok: true, result: true });
      await expectError('deleteMessage', { chat_id: chatId, message_id: msg.message_id }, 400, 'Bad Request: message to delete not found');

      const info = await call('getChat', { chat_id: chatId });
      assert.equal((info.body.result as Body).type, 'private');
      assert.equal((info.body.result as Body).username, 'carol');
      assert.deepEqual((await call('logOut')).body, { ok: true, result: true });
      assert.deepEqual((await call('close')).body, { ok: true, result: true });

      // The person sees what the bot wrote, edits and deletions included.
      const seen = await chat.messages('plain_http_bot');
      assert.ok(seen.some((m) => m.text === 'hi there 😀 !'));
      assert.ok(!seen.some((m) => m.message_id === msg.message_id));
    });

    it('refuses bad parameters with the official descriptions', async () => {
      await expectError('sendMessage', { text: 'x' }, 400, 'Bad Request: chat_id is empty');
      await expectError('sendMessage', { chat_id: 'nonsense!', text: 'x' }, 400, 'Bad Request: chat not found');
      await expectError('sendMessage', { chat_id: '@nobody_here', text: 'x' }, 400, 'Bad Request: chat not found');
      await expectError('sendMessage', { chat_id: chatId }, 400, 'Bad Request: message text is empty');
      await expectError('sendMessage', { chat_id: chatId, text: '   ' }, 400, 'Bad Request: message text is empty');
      await expectError('sendMessage', { chat_id: chatId, text: 'x'.repeat(4097) }, 400, 'Bad Request: message is too long');
      await expectError('sendMessage', { chat_id: chatId, text: '<b>x', parse_mode: 'HTML' }, 400, `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "b"`);
      await expectError('sendMessage', { chat_id: chatId, text: 'v1.0', parse_mode: 'MarkdownV2' }, 400, `Bad Request: can't parse entities: Character '.' is reserved and must be escaped with the preceding '\\'`);
      await expectError('sendMessage', { chat_id: chatId, text: '*x', parse_mode: 'Markdown' }, 400, `Bad Request: can't parse entities: Can't find end of the entity starting at byte offset 0`);
      await expectError('sendMessage', { chat_id: chatId, text: 'x', parse_mode: 'bbcode' }, 400, 'Bad Request: unsupported parse_mode');
      await expectError('sendMessage', { chat_id: chatId, text: 'x', reply_parameters: '{not json' }, 400, "Bad Request: can't parse reply parameters JSON object");
      await expectError('sendMessage', { chat_id: chatId, text: 'x', reply_parameters: { message_id: 424242 } }, 400, 'Bad Request: message to be replied not found');
      await expectError('sendMessage', { chat_id: chatId, text: 'x', entities: '[1]' }, 400, /^Bad Request: can't parse entities/);
      await expectError('getUpdates', { allowed_updates: '{"a":1}' }, 400, /^Bad Request: can't parse allowed_updates/);
      await expectError('noSuchMethod', {}, 404, 'Not Found: method not found');
    });

    it('applies flood control with retry_after and Retry-After', async () => {
      let limited: Response | undefined;
      for (let i = 0; i < 6 && !limited; i++) {
        const res = await fetch(`${server.botUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: chatId, text: `n${i}` }) });
        if (res.status === 429) limited = res;
        else assert.equal(res.status, 200);
      }
      assert.ok(limited, 'no 429 after the burst');
      const body = (await limited.json()) as Body;
      const retry = (body.parameters as { retry_after: number }).retry_after;
      assert.ok(Number.isInteger(retry) && retry >= 1);
      assert.equal(body.description, `Too Many Requests: retry after ${retry}`);
      assert.equal(limited.headers.get('retry-after'), String(retry));
    });

    it('takes every transport: GET query, form, multipart, JSON strings, any method case, /test/', async () => {
      const base = `${server.botUrl}/bot${token}`;
      const get = await fetch(`${base}/GETME`);
      assert.equal(get.status, 200);
      assert.equal(((await get.json()) as { result: { username: string } }).result.username, 'plain_http_bot');
      const test = await fetch(`${base}/test/getMe`);
      assert.equal(test.status, 200);
      const form = await fetch(`${base}/getchat`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ chat_id: String(chatId) }) });
      assert.equal(form.status, 200);
      const fd = new FormData();
      fd.set('chat_id', String(chatId));
      const multi = await fetch(`${base}/getChat`, { method: 'POST', body: fd });
      assert.equal(multi.status, 200, await multi.clone().text());
      const query = await fetch(`${base}/getChat?chat_id=${chatId}`, { method: 'POST' });
      assert.equal(query.status, 200);
      const nested = await call('getUpdates', { allowed_updates: '["message"]', timeout: 0 });
      assert.equal(nested.status, 200);
    });

    it('answers every malformed request with the error envelope, never a 500', async () => {
      const envelope = async (res: Response, code: number, description?: string) => {
        assert.equal(res.status, code);
        assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
        const body = (await res.json()) as Body;
        assert.equal(body.ok, false);
        assert.equal(body.error_code, code);
        if (description) assert.equal(body.description, description);
      };
      const [id] = token.split(':');
      for (const bad of ['abc', `${id}:short`, `${id}:${'A'.repeat(35)}`, `999:${token.split(':')[1]}`, '', `${token}x`, '%00']) {
        await envelope(await fetch(`${server.botUrl}/bot${bad}/getMe`), 401, 'Unauthorized');
      }
      await envelope(await fetch(`${server.botUrl}/bot`), 404, 'Not Found');
      await envelope(await fetch(`${server.botUrl}/nobot/getMe`), 404, 'Not Found');
      await envelope(await fetch(`${server.botUrl}/bot${token}/getMe`, { method: 'PUT' }), 501);
      await envelope(await fetch(`${server.botUrl}/bot${token}/getMe`, { method: 'DELETE' }), 501);
      const head = await fetch(`${server.botUrl}/bot${token}/sendMessage?chat_id=${chatId}&text=head`, { method: 'HEAD' });
      assert.equal(head.status, 501);
      await envelope(await fetch(`${server.botUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"chat_id":' }), 400);
      await envelope(await fetch(`${server.botUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[1,2]' }), 400, 'Bad Request: chat_id is empty');
      await envelope(await fetch(`${server.botUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: 'garbage' }), 400);
      await envelope(await fetch(`${server.botUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: chatId, text: 'x'.repeat(2 * 1024 * 1024) }) }), 413);
      await envelope(await fetch(`${server.botUrl}/bot${token}/sendMessage`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' }), 400, 'Bad Request: chat_id is empty');
      await envelope(await fetch(`${server.botUrl}/bot${token}/sendMessage?chat_id[]=1&text=x`), 400);
      await envelope(await fetch(`${server.botUrl}/bot${token}/getChat?chat_id=1e400`), 400, 'Bad Request: chat not found');
      await envelope(await fetch(`${server.botUrl}/bot${token}/editMessageText?chat_id=${chatId}&message_id=abc&text=x`), 400);
    });
  });
}
