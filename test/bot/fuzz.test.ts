/**
 * Property test of the Bot API: 10,000 random calls (method names in any
 * case, prototype names and noise; known parameter names and noise; values
 * of every JSON type, nested, malformed JSON text, any code point; JSON,
 * form, query and multipart transports; right and wrong tokens; raw bodies)
 * are each answered below 500 in the Bot API envelope, and no connection is
 * dropped. fast-check prints the seed and the smallest failing call.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from './support.js';

/** Calls fired at once per property run: 10,000 calls in all. */
const BATCH = 10;
const RUNS = 1_000;

const METHODS = ['getMe', 'getUpdates', 'sendMessage', 'editMessageText', 'deleteMessage', 'setWebhook', 'deleteWebhook', 'getWebhookInfo', 'getChat', 'logOut', 'close'];
const NAMES = [
  'chat_id', 'text', 'parse_mode', 'entities', 'reply_parameters', 'reply_to_message_id', 'allow_sending_without_reply', 'disable_notification',
  'message_id', 'inline_message_id', 'offset', 'limit', 'allowed_updates', 'url', 'secret_token', 'max_connections', 'drop_pending_updates',
];

interface Call {
  method: string;
  token: 'right' | 'wrong' | 'garbage';
  params: Record<string, unknown>;
  transport: 'json' | 'form' | 'query' | 'multipart' | 'get' | 'raw';
  raw: string;
}

function arbitraries(chatId: number) {
  const anyCase = fc.tuple(fc.constantFrom(...METHODS), fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }))
    .map(([m, upper]) => [...m].map((c, i) => (upper[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
  const method = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...METHODS) },
    { weight: 2, arbitrary: anyCase },
    { weight: 1, arbitrary: fc.constantFrom('constructor', '__proto__', '__proto_', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '', 'test/getMe', '%00', '%ZZ', '.x') },
    // Encoded, and never a dot segment (fetch would resolve `..` away from /bot…).
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }).map((s) => encodeURIComponent(s).replace(/^\.+$/, (d) => `${d}x`)) },
  );
  const known = fc.constantFrom(
    chatId, String(chatId), `@dora`, '@nobody', -1, 0, 1e400, 'HTML', 'html', 'MarkdownV2', 'Markdown', 'bbcode', '<b>x', '<b>x</b>', '*x', '_x_', 'v1.0',
    '[1]', '[]', '{"message_id":1}', '{"message_id":"x"}', '["message"]', '{not json', 'true', 'false', '1', '-100', 'https://127.0.0.1/x', 'http://x', '',
    '\u0000', '\ud800', '&constructor;', '&lt;', 'x'.repeat(5000),
  );
  const noise = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }));
  const value = fc.oneof(
    { weight: 4, arbitrary: known },
    { weight: 2, arbitrary: noise },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [[[]]], { a: { b: { c: [1] } } }) },
  );
  const key = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...NAMES) }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) });
  const params = fc.dictionary(key, value, { maxKeys: 8 });
  const transport = fc.constantFrom<Call['transport']>('json', 'json', 'json', 'form', 'query', 'multipart', 'get', 'raw');
  const raw = fc.constantFrom('{"chat_id":', '[1,2]', 'null', '"text"', '1', '{}', '{"__proto__":{"x":1}}', `${'['.repeat(3000)}${']'.repeat(3000)}`, '\u0000', '{"text":"\ud800"}');
  const token = fc.constantFrom<Call['token']>('right', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'wrong', 'garbage');
  return fc.array(fc.record({ method, token, params, transport, raw }), { minLength: BATCH, maxLength: BATCH });
}

const asText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');

describe('Bot API under random calls', { timeout: 600_000 }, () => {
  let server: BotTestServer;
  let token: string;
  let chatId: number;

  before(async () => {
    // Flood control off: the property sends thousands of messages into one chat.
    server = await startBotServer({ env: { GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0' } });
    const chat = new ChatApi(server.botUrl, await signedInPerson(server, 'dora'));
    token = await botViaBotFather(chat, 'Fuzzed', 'fuzzed_calls_bot');
    await chat.send('fuzzed_calls_bot', 'hello');
    chatId = ((await botApi(server.botUrl, token, 'getUpdates')).body.result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
  });
  after(() => server.close());

  /** One call, checked: below 500, the envelope, Retry-After with a 429. */
  async function check(call: Call): Promise<void> {
    const tok = call.token === 'right' ? token : call.token === 'wrong' ? `${token.split(':')[0]}:${'A'.repeat(35)}` : '%00:x';
    // A long poll would hold the property for up to 50 s.
    const params = { ...call.params, timeout: 0 };
    const url = `${server.botUrl}/bot${tok}/${call.method}`;
    const text = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, asText(v)]));
    let init: RequestInit & { url: string };
    switch (call.transport) {
      case 'json':
        init = { url, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(params) };
        break;
      case 'form':
        init = { url, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(text).toString() };
        break;
      case 'multipart': {
        const fd = new FormData();
        for (const [k, v] of Object.entries(text)) fd.append(k, v);
        init = { url, method: 'POST', body: fd };
        break;
      }
      case 'raw':
        init = { url, method: 'POST', headers: { 'content-type': 'application/json' }, body: call.raw };
        break;
      default:
        init = { url: `${url}?${new URLSearchParams(text)}`, method: call.transport === 'get' ? 'GET' : 'POST' };
    }
    const res = await fetch(init.url, init);
    const body = await res.text();
    assert.ok(res.status < 500, `${res.status} ${body.slice(0, 200)}`);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/, body.slice(0, 200));
    const json = JSON.parse(body) as { ok: boolean; error_code?: number; description?: string; parameters?: { retry_after?: number } };
    assert.equal(json.ok, res.status === 200, body.slice(0, 200));
    if (!json.ok) {
      assert.equal(json.error_code, res.status);
      assert.equal(typeof json.description, 'string');
      if (res.status === 429) assert.equal(res.headers.get('retry-after'), String(json.parameters?.retry_after));
    }
    // A webhook set by a random call would turn getUpdates into 409s for the rest of the run.
    if (res.status === 200 && call.method.toLowerCase() === 'setwebhook') await botApi(server.botUrl, token, 'deleteWebhook');
  }

  it(`answers ${RUNS * BATCH} random calls in the envelope, never a 5xx`, async () => {
    await fc.assert(fc.asyncProperty(arbitraries(chatId), async (calls) => {
      await Promise.all(calls.map(check));
    }), { numRuns: RUNS });
  });
});
