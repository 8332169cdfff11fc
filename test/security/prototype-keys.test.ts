/**
 * Names Object.prototype holds (`constructor`, `__proto__`, `toString`,
 * `hasOwnProperty`, `valueOf`) as keys and values of request input, at the
 * Bot API, the token endpoint and the authorization endpoint: each is
 * answered in its surface's error shape or as an unknown name, never below a
 * 5xx, never with a function's text (issue 24, finding 9: `reply_markup`
 * `{"constructor":1}` was answered with `function Object() { [native code] }`).
 * The lint rule in eslint.config.js keeps `name in object` off keys computed
 * at run time.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { ChatApi, botApi, botViaBotFather, signedInPerson, startBotServer, type BotTestServer } from '../bot/support.js';
import { basic, post } from './support.js';

const PROTO = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', 'isPrototypeOf'];
const NATIVE = /native code|function |\[object /;

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

for (const { kind, skip } of await databaseKinds()) {
  describe(`prototype names as request keys (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let token: string;
    let chatId: number;
    let client: { id: string; secret: string };
    before(async () => {
      server = await startBotServer({ db: kind, env: { GATEHOUSE_BOT_FLOOD_CHAT_RATE: '0', GATEHOUSE_BOT_FLOOD_GLOBAL_RATE: '0' } });
      const person = await signedInPerson(server, 'petra');
      const chat = new ChatApi(server.botUrl, person);
      token = await botViaBotFather(chat, 'Proto', 'proto_keys_bot');
      await chat.send('proto_keys_bot', 'hello');
      const updates = await botApi(server.botUrl, token, 'getUpdates', {});
      chatId = (updates.body.result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
      const c = await server.createClient({ grantTypes: ['client_credentials', 'authorization_code'] });
      client = { id: c.id, secret: c.secret! };
    });
    after(() => server?.close());

    it('Bot API: reply_markup and button fields named after Object.prototype are ignored or refused', async () => {
      for (const name of PROTO) {
        for (const markup of [{ [name]: 1 }, { [name]: true }, { keyboard: [[{ text: 'a', [name]: true }]] }, { inline_keyboard: [[{ text: 'a', [name]: 'x' }]] }]) {
          const { status, body } = await botApi(server.botUrl, token, 'sendMessage', { chat_id: chatId, text: 'x', reply_markup: JSON.stringify(markup) });
          const text = JSON.stringify(body);
          assert.ok(status === 200 || status === 400, `${name}: ${status} ${text}`);
          assert.doesNotMatch(text, NATIVE, `${JSON.stringify(markup)}: ${text}`);
          if (status === 400) assert.match(String(body.description), /^Bad Request: /);
        }
      }
    });

    it('Bot API: prototype names as methods and as parameters', async () => {
      for (const name of PROTO) {
        const m = await botApi(server.botUrl, token, name, {});
        assert.equal(m.status, 404, `${name}: ${JSON.stringify(m.body)}`);
        for (const method of ['getMe', 'sendMessage', 'getUpdates', 'setMyCommands', 'sendPhoto']) {
          for (const params of [{ [name]: '1' }, { chat_id: chatId, text: name, [name]: { [name]: 1 } }, { chat_id: name, photo: name, commands: `[{"command":"a","description":"b","${name}":1}]` }]) {
            const r = await botApi(server.botUrl, token, method, params);
            assert.ok(r.status < 500, `${method} ${JSON.stringify(params)}: ${r.status}`);
            assert.doesNotMatch(JSON.stringify(r.body), NATIVE, `${method} ${JSON.stringify(params)}`);
          }
        }
        // Form and query transports build their objects from the names too.
        const form = await fetch(`${server.botUrl}/bot${token}/sendMessage?${name}=1`, {
          method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `chat_id=${chatId}&text=x&${encodeURIComponent(name)}=2&reply_markup=${encodeURIComponent(`{"${name}":true}`)}`,
        });
        assert.ok(form.status === 200 || form.status === 400, `form ${name}: ${form.status}`);
        assert.doesNotMatch(await form.text(), NATIVE);
      }
    });

    it('token endpoint: prototype names as grant types, parameter names and DPoP key types', async () => {
      const auth = { authorization: basic(client.id, client.secret) };
      for (const name of PROTO) {
        for (const fields of <Record<string, string>[]>[{ grant_type: name }, { grant_type: 'client_credentials', [name]: name }, { grant_type: 'client_credentials', scope: name }, { grant_type: 'authorization_code', code: name, redirect_uri: name, code_verifier: name }]) {
          const res = await post(server.url, '/oauth/token', fields, auth);
          const text = await res.text();
          assert.ok(res.status === 200 || res.status === 400 || res.status === 401, `${JSON.stringify(fields)}: ${res.status} ${text}`);
          assert.doesNotMatch(text, NATIVE);
        }
        const res = await post(server.url, '/oauth/token', { grant_type: 'client_credentials', client_id: name, client_secret: name });
        assert.ok(res.status === 400 || res.status === 401, `client_id ${name}: ${res.status}`);
        // A DPoP proof whose jwk claims an inherited key type (RFC 9449 §4.2: refused as invalid_dpop_proof).
        const proof = `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty: name, crv: 'P-256', x: 'AA', y: 'AA' } })}.${b64({ htm: 'POST', htu: `${server.url}/oauth/token`, iat: Math.floor(Date.now() / 1000), jti: name })}.AAAA`;
        const dpop = await post(server.url, '/oauth/token', { grant_type: 'client_credentials' }, { ...auth, dpop: proof });
        const dpopText = await dpop.text();
        assert.equal(dpop.status, 400, `DPoP kty ${name}: ${dpopText}`);
        assert.equal((JSON.parse(dpopText) as { error: string }).error, 'invalid_dpop_proof');
      }
    });

    it('authorization endpoint: prototype names as values and parameter names', async () => {
      const agent = new Agent(server.url);
      for (const name of PROTO) {
        for (const q of <Record<string, string>[]>[{ response_type: name, client_id: client.id }, { response_type: 'code', client_id: name }, { response_type: 'code', client_id: client.id, prompt: name, [name]: name },
          { response_type: 'code', client_id: client.id, response_mode: name, code_challenge_method: name, code_challenge: 'x'.repeat(43) }]) {
          const res = await agent.get(`/oauth2?${new URLSearchParams(q)}`);
          const text = await res.text();
          assert.ok(res.status < 500, `${JSON.stringify(q)}: ${res.status}`);
          assert.doesNotMatch(text, /native code/);
        }
      }
    });
  });
}
