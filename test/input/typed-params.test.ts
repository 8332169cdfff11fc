/**
 * Parameters of the wrong JSON type and over-deep JSON, at every surface that
 * reads JSON: each answers in its own error shape, never a 5xx, and nothing
 * stored changes. Guards the route schemas and the JSON depth limit of
 * src/http/input.ts (before them `"code":123` reached sha256() and answered 500).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonTooDeep } from '../../src/http/input.js';
import { databaseKinds } from '../helpers/db.js';
import { startBotServer, signedInPerson, type BotTestServer, type Person } from '../bot/support.js';
import { expectErrorPage, expectOAuthError } from '../security/support.js';

const ADMIN = 'typed-params-admin-token-0123456789';
const JSON_TYPE = { 'content-type': 'application/json' };
/** Everything JSON has that is not a string, and a few strings the core must never see. */
const WRONG: unknown[] = [123, -0.5, 1e308, {}, { $ne: 1 }, [], [1], null, true, false];
const DEEP = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const DEEP_OBJECT = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body, redirect: 'manual' });

describe('JSON depth check', () => {
  it('counts nesting outside strings only', () => {
    assert.equal(jsonTooDeep(DEEP(32)), false);
    assert.equal(jsonTooDeep(DEEP(33)), true);
    assert.equal(jsonTooDeep(JSON.stringify({ a: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[' })), false);
    assert.equal(jsonTooDeep(JSON.stringify({ a: '\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[' })), false);
    assert.equal(jsonTooDeep(`{"a":"\\"",${'['.repeat(40)}`), true);
  });
});

for (const { kind, skip } of await databaseKinds()) {
  describe(`typed parameters (${kind})`, { skip }, () => {
    let server: BotTestServer;
    let person: Person;
    let admin: Record<string, string>;
    let endpointId: string;

    /** What the refused requests below must leave as it was. */
    const snapshot = async () => {
      const list = async (path: string) => (await (await fetch(`${server.url}/admin/${path}`, { headers: admin })).json()) as Record<string, unknown[]>;
      return JSON.stringify([await list('clients'), await list('webhooks'), await server.gh.storage.users.findByUsername('typed')]);
    };
    let before0: string;

    before(async () => {
      server = await startBotServer({ db: kind, env: { GATEHOUSE_ADMIN_TOKEN: ADMIN, GATEHOUSE_ROLES: 'auth,api,bot' } });
      admin = { authorization: `Bearer ${ADMIN}` };
      person = await signedInPerson(server, 'typed');
      const made = await post(`${server.url}/admin/webhooks`, JSON.stringify({ url: 'https://hooks.example.test/x', events: '*' }), admin);
      assert.equal(made.status, 201, await made.clone().text());
      endpointId = ((await made.json()) as { id: string }).id;
      before0 = await snapshot();
    });
    after(() => server.close());

    it('POST {bot_api_url}/client/token: code, refresh_token or grant_type of any other type → 400 invalid_request', async () => {
      for (const v of WRONG) {
        for (const body of [
          { grant_type: 'authorization_code', code: v, code_verifier: 'x'.repeat(43) },
          { grant_type: 'authorization_code', code: 'abc', code_verifier: v },
          { grant_type: 'refresh_token', refresh_token: v },
          { grant_type: v, code: 'abc' },
        ]) {
          const res = await post(`${server.botUrl}/client/token`, JSON.stringify(body));
          await expectOAuthError(res, 400);
        }
      }
    });

    it('POST {bot_api_url}/client/token: duplicate keys, __proto__ and constructor keys → an RFC 6749 §5.2 error', async () => {
      for (const raw of [
        '{"grant_type":"refresh_token","refresh_token":"a","refresh_token":1}',
        '{"grant_type":"refresh_token","refresh_token":"a","__proto__":{"refresh_token":1}}',
        '{"grant_type":"refresh_token","constructor":{"prototype":{"x":1}},"refresh_token":"a"}',
      ]) {
        const res = await post(`${server.botUrl}/client/token`, raw);
        assert.ok(res.status >= 400 && res.status < 500, `${res.status} for ${raw}`);
        await expectOAuthError(res, res.status);
      }
    });

    it('chat client API: text, after and timeout of the wrong type → 400 invalid_request JSON', async () => {
      const auth = { authorization: `Bearer ${person.token}` };
      for (const v of WRONG) {
        const res = await post(`${server.botUrl}/client/chats/BotFather/messages`, JSON.stringify({ text: v }), auth);
        await expectChatError(res, 400);
      }
      for (const body of ['[]', '"hello"', '1', 'null']) await expectChatError(await post(`${server.botUrl}/client/chats/BotFather/messages`, body, auth), 400);
      for (const q of ['after=1&after=2', 'timeout=1&timeout=', 'after=%ZZ', 'after=1e3']) {
        await expectChatError(await fetch(`${server.botUrl}/client/chats/BotFather/messages?${q}`, { headers: auth }), 400);
      }
    });

    it('admin API: fields of the wrong type → 400 invalid_request', async () => {
      const cases: [path: string, body: unknown][] = [
        // null is "not given" for the optional registration fields (RFC 7591 §2).
        ...WRONG.filter((v) => v !== null).map((v) => ['/admin/clients', { client_name: 'App', redirect_uris: ['https://app.example/cb'], scope: v }] as [string, unknown]),
        ...WRONG.map((v) => ['/admin/users', { username: 'someone', email: 'a@b.example', password: v }] as [string, unknown]),
        ...['yes', 1, null, [true], {}].map((v) => ['/admin/webhooks', { url: 'https://h.example/x', events: '*', ordered: v }] as [string, unknown]),
        ['/admin/webhooks', { url: 'https://h.example/x', events: 5 }],
        ['/admin/webhooks', { url: 'https://h.example/x', events: '*', chat_id: 1.5 }],
        ['/admin/webhooks', { url: ['https://h.example/x'], events: '*' }],
        [`/admin/webhooks/${endpointId}/replay`, { since: 1e308 }],
        [`/admin/webhooks/${endpointId}/replay`, { since: 1e20 }],
        [`/admin/webhooks/${endpointId}/replay`, { since: '99999999999999999999' }],
        [`/admin/webhooks/${endpointId}/replay`, { since: {} }],
        [`/admin/webhooks/${endpointId}/replay`, { since: [1] }],
      ];
      for (const [path, body] of cases) {
        await expectOAuthError(await post(`${server.url}${path}`, JSON.stringify(body), admin), 400, 'invalid_request');
      }
      const queries = ['limit=1&limit=2', 'since=99999999999999999999', 'since=1e400'];
      for (const q of [...queries, 'status=pending&status=failed']) {
        await expectOAuthError(await fetch(`${server.url}/admin/webhooks/${endpointId}/messages?${q}`, { headers: admin }), 400, 'invalid_request');
      }
      for (const q of [...queries, 'type=a&type=b']) {
        await expectOAuthError(await fetch(`${server.url}/admin/events?${q}`, { headers: admin }), 400, 'invalid_request');
      }
    });

    it('JSON nested deeper than the limit → 400 in each surface\'s shape, never a stack overflow', async () => {
      for (const deep of [DEEP(5_000), DEEP_OBJECT(5_000), DEEP(100_000).slice(0, 60_000)]) {
        const refused = await expectOAuthError(await post(`${server.url}/admin/clients`, deep, admin), 400, 'invalid_request');
        assert.match(refused.error_description ?? '', /nested deeper than 32/, 'refused by the depth limit, before parsing');
        await expectOAuthError(await post(`${server.url}/oauth/token`, deep), 400, 'invalid_request');
        await expectErrorPage(await post(`${server.url}/login`, deep), 400);
        await expectOAuthError(await post(`${server.botUrl}/client/token`, deep), 400, 'invalid_request');
        await expectChatError(await post(`${server.botUrl}/client/chats/BotFather/messages`, deep, { authorization: `Bearer ${person.token}` }), 400);
        const api = await post(`${server.apiUrl}/user`, deep.slice(0, 15_000));
        assert.equal(api.status, 400, await api.clone().text());
        assert.match(api.headers.get('www-authenticate') ?? '', /^Bearer .*error="invalid_request"/);
      }
    });

    it('the resource server answers a form access_token of another shape with RFC 6750 §3.1 invalid_request', async () => {
      for (const body of ['access_token=a&access_token=b', 'access_token[]=a']) {
        const res = await fetch(`${server.apiUrl}/user`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
        assert.ok(res.status === 400 || res.status === 401, `${res.status}`);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer /);
      }
    });

    it('nothing stored changed', async () => {
      assert.equal(await snapshot(), before0);
    });
  });
}

/** The chat client API's error: JSON `{error, error_description}`, uncacheable. */
async function expectChatError(res: Response, status: number): Promise<void> {
  const text = await res.text();
  assert.equal(res.status, status, text.slice(0, 300));
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.match(res.headers.get('cache-control') ?? '', /no-store/);
  const body = JSON.parse(text) as { error?: unknown; error_description?: unknown };
  assert.equal(typeof body.error, 'string', text);
  assert.equal(typeof body.error_description, 'string', text);
}
