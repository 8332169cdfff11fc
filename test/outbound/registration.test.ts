import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { botApi, botViaBotFather, ChatApi, signedInPerson, startBotServer, type BotTestServer } from '../bot/support.js';
import { admin, ADMIN_TOKEN } from '../notify/support.js';

/**
 * IPv4 loopback hidden in IPv6 forms passed setWebhook and the admin webhook
 * API before the outbound module (issue 10 item 6). Registration now uses the
 * same destination rule as the connection.
 */
const HIDDEN_LOOPBACK: [url: string, address: string][] = [
  ['https://[::127.0.0.1]/hook', '::7f00:1'],
  ['https://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1'],
  ['https://[64:ff9b::7f00:1]/hook', '64:ff9b::7f00:1'],
  ['https://[2002:7f00:1::]/hook', '2002:7f00:1::'],
  ['https://2130706433/hook', '127.0.0.1'],
  ['https://0x7f.1/hook', '127.0.0.1'],
];

describe('webhook registration refuses loopback in every spelling', () => {
  let server: BotTestServer;
  let token: string;
  before(async () => {
    server = await startBotServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN } });
    token = await botViaBotFather(new ChatApi(server.botUrl, await signedInPerson(server, 'mallory')), 'Sneaky', 'sneaky_ssrf_bot');
  });
  after(() => server.close());

  it('setWebhook answers 400 "bad webhook: IP address … is reserved" and stores nothing', async () => {
    for (const [url, address] of HIDDEN_LOOPBACK) {
      const r = await botApi(server.botUrl, token, 'setWebhook', { url });
      assert.equal(r.status, 400, url);
      assert.deepEqual(r.body, { ok: false, error_code: 400, description: `Bad Request: bad webhook: IP address ${address} is reserved` }, url);
    }
    const info = await botApi(server.botUrl, token, 'getWebhookInfo');
    assert.equal((info.body.result as { url: string }).url, '');
  });

  it('the admin webhook API answers 400 invalid_request and creates no endpoint', async () => {
    for (const [url] of HIDDEN_LOOPBACK) {
      const r = await admin(server.url, 'POST', '/webhooks', { url, events: ['*'] });
      assert.equal(r.status, 400, url);
      assert.equal(r.json.error, 'invalid_request', url);
      assert.match(String(r.json.error_description), /loopback or private-network address/, url);
    }
    assert.deepEqual((await admin(server.url, 'GET', '/webhooks')).json.webhooks, []);
  });
});
