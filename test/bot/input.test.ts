import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

type Body = Record<string, unknown>;

/** The Bot API's error envelope with the HTTP status equal to error_code, always JSON. */
async function envelope(res: Response, code: number, description?: string | RegExp): Promise<Body> {
  const text = await res.text();
  assert.equal(res.status, code, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  const body = JSON.parse(text) as Body;
  assert.equal(body.ok, false, text);
  assert.equal(body.error_code, code, text);
  if (typeof description === 'string') assert.equal(body.description, description);
  else if (description) assert.match(String(body.description), description);
  return body;
}

/** A raw GET of exactly `path` (fetch would normalise it), answered as status and body. */
function rawGet(base: string, path: string): Promise<{ status: number; type: string; body: string }> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Bot API input: method names, paths, encodings, nesting and parameter types', () => {
  let server: BotTestServer;
  let token: string;
  let chatId: number;
  let base: string;

  before(async () => {
    // Flood control off: this suite sends hundreds of messages into one chat.
    server = await startBotServer({ env: { GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0' } });
    const chat = new ChatApi(server.botUrl, await signedInPerson(server, 'dora'));
    token = await botViaBotFather(chat, 'Typed', 'typed_input_bot');
    await chat.send('typed_input_bot', 'hello');
    const updates = (await botApi(server.botUrl, token, 'getUpdates')).body.result as { message: { chat: { id: number } } }[];
    chatId = updates[0]!.message.chat.id;
    base = `${server.botUrl}/bot${token}`;
  });
  after(() => server.close());

  it('looks method names up among the served methods only, case-insensitively', async () => {
    for (const name of ['constructor', '__proto__', '__proto_', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', 'prototype']) {
      const body = await envelope(await fetch(`${base}/${name}`), 404, 'Not Found: method not found');
      assert.ok(!JSON.stringify(body).includes('tokenHash'), name);
      await envelope(await fetch(`${base}/${name}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 404, 'Not Found: method not found');
    }
    for (const name of ['getMe', 'GETME', 'getme', 'gEtMe']) {
      const res = await fetch(`${base}/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(((await res.json()) as { result: { username: string } }).result.username, 'typed_input_bot');
    }
    const sent = await fetch(`${base}/SENDmessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: chatId, text: 'mixed case' }) });
    assert.equal(sent.status, 200);
    assert.equal((await fetch(`${base}/GetUpdates?timeout=0`)).status, 200);
  });

  it('answers malformed paths and encodings in the envelope', async () => {
    await envelope(await fetch(`${base}/%E0%A4%A`), 400, /^Bad Request: /);
    await envelope(await fetch(`${server.botUrl}/bot%ZZ/getMe`), 400, /^Bad Request: /);
    await envelope(await fetch(`${server.botUrl}/bot${token.replace(':', '%G')}/getMe`), 400, /^Bad Request: /);
    await envelope(await fetch(`${base}/${'a'.repeat(300)}`), 404, 'Not Found: method not found');
    await envelope(await fetch(`${server.botUrl}/bot${'1'.repeat(300)}/getMe`), 401, 'Unauthorized');
    await envelope(await fetch(`${base}/${'a'.repeat(5000)}`), 414);
    await envelope(await fetch(`${server.botUrl}/bot${'1'.repeat(5000)}/getMe`), 414);
    const huge = await rawGet(server.botUrl, `/bot${token}/${'a'.repeat(20_000)}`);
    assert.equal(huge.status, 431);
    assert.match(huge.type, /^application\/json/);
    assert.deepEqual(JSON.parse(huge.body), { ok: false, error_code: 431, description: 'Request Header Fields Too Large' });
    const bad = await rawGet(server.botUrl, `/bot${token}/getMe?chat_id=%ZZ&x=%`);
    assert.equal(bad.status, 200, bad.body);
  });

  it('refuses deeply nested JSON without a stack overflow', async () => {
    for (const depth of [5_000, 100_000]) {
      const objects = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const arrays = '['.repeat(depth) + ']'.repeat(depth);
      for (const nested of [objects, arrays]) {
        for (const name of ['text', 'chat_id', 'entities', 'reply_parameters', 'parse_mode', 'unknown_parameter']) {
          const res = await fetch(`${base}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"chat_id":${chatId},"text":"x",${JSON.stringify(name)}:${nested}}` });
          assert.ok(res.status < 500, `${depth} ${name}: ${res.status}`);
          if (name !== 'unknown_parameter') await envelope(res, 400);
          else await res.body?.cancel();
        }
        // Nested JSON text in a form field, as node-telegram-bot-api sends reply_parameters.
        for (const name of ['reply_parameters', 'entities']) {
          const form = await fetch(`${base}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ chat_id: String(chatId), text: 'x', [name]: nested.slice(0, 40_000) + nested.slice(-40_000) }) });
          await envelope(form, 400);
        }
      }
    }
  });

  it('refuses parameters of the wrong type with a 400, never a 5xx', async () => {
    const methods: Record<string, string[]> = {
      sendMessage: ['chat_id', 'text', 'parse_mode', 'entities', 'reply_parameters', 'reply_to_message_id', 'allow_sending_without_reply', 'disable_notification'],
      editMessageText: ['chat_id', 'message_id', 'inline_message_id', 'text', 'parse_mode', 'entities'],
      deleteMessage: ['chat_id', 'message_id'],
      getChat: ['chat_id'],
      getUpdates: ['offset', 'limit', 'timeout', 'allowed_updates'],
      setWebhook: ['url', 'secret_token', 'max_connections', 'allowed_updates', 'drop_pending_updates'],
      deleteWebhook: ['drop_pending_updates'],
      getWebhookInfo: ['x'],
      getMe: ['x'],
    };
    const values: unknown[] = [123, -1.5, 1e300, -9223372036854776000, 9223372036854776000, { a: 1 }, [], ['a', 'b'], [[[]]], null, true, false, '', '\u0000', 'x'.repeat(5000)];
    for (const [method, names] of Object.entries(methods)) {
      for (const name of names) {
        // (A numeric getUpdates timeout would long-poll.)
        for (const value of values.filter((v) => !(method === 'getUpdates' && name === 'timeout' && (typeof v === 'number' || v === true)))) {
          const params = { chat_id: chatId, message_id: 1, text: 'typed', [name]: value };
          const r = await botApi(server.botUrl, token, method, params);
          assert.ok(r.status < 500, `${method} ${name}=${JSON.stringify(value).slice(0, 20)}: ${r.status} ${JSON.stringify(r.body)}`);
          if (r.status !== 200) {
            assert.equal(r.body.ok, false);
            assert.equal(r.body.error_code, r.status);
          }
        }
      }
    }
    // Objects and arrays where a string belongs, in tdlib's words; numbers are text, as the official server takes them.
    await envelope(await fetch(`${base}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: chatId, text: { a: 1 } }) }), 400, 'Bad Request: field "text" must be of type String');
    await envelope(await fetch(`${base}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: chatId, text: ['a'] }) }), 400, 'Bad Request: field "text" must be of type String');
    await envelope(await fetch(`${base}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: [chatId], text: 'x' }) }), 400, 'Bad Request: field "chat_id" must be of type Integer or String');
    await envelope(await fetch(`${base}/getUpdates`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ offset: { a: 1 } }) }), 400, 'Bad Request: field "offset" must be of type Integer');
    await envelope(await fetch(`${base}/setWebhook`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: ['https://example.com'] }) }), 400, 'Bad Request: field "url" must be of type String');
    const numeric = await botApi(server.botUrl, token, 'sendMessage', { chat_id: chatId, text: 12345 });
    assert.equal(numeric.status, 200);
    assert.equal((numeric.body.result as { text: string }).text, '12345');
    // A repeated query or form parameter counts once, with its last value.
    const repeated = await fetch(`${base}/sendMessage?chat_id=${chatId}&text=first&text=last`);
    assert.equal(((await repeated.json()) as { result: { text: string } }).result.text, 'last');
  });
});
