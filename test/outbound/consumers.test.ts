import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { callProvider } from '../../src/core/federation/fetch.js';
import type { Client } from '../../src/core/model.js';
import { deliverLogout, outboundLogoutSender } from '../../src/core/oidc/backchannel.js';
import type { OutboundHttp, OutboundResponse } from '../../src/core/outbound.js';
import { RemoteJwks } from '../../src/core/resource/jwks.js';
import { botWebhookChecker } from '../../src/http/bot/bot-webhook-client.js';
import { createOutbound } from '../../src/infra/outbound/client.js';

/** An outbound port that answers every request the same way, and records them. */
function answering(res: Partial<OutboundResponse>): OutboundHttp & { urls: string[] } {
  const urls: string[] = [];
  return Object.assign(async (req: { url: string }) => {
    urls.push(req.url);
    return { status: 200, headers: {}, body: '', truncated: false, ...res };
  }, { urls });
}

const redirect = { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data' } };

/** Each server-side request of the core goes through the outbound port, and none follows a redirect. */
describe('outbound consumers', () => {
  let hits = 0;
  let receiver: Server;
  let receiverUrl: string;
  before(async () => {
    receiver = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  });
  after(() => receiver.close());

  it('sign-in providers: a redirect or an oversized reply is a 502, not followed', async () => {
    await assert.rejects(callProvider(answering(redirect), 'https://idp.example.com/token', { method: 'POST' }, 'token'), { status: 502 });
    await assert.rejects(callProvider(answering({ truncated: true, body: '{' }), 'https://idp.example.com/token', {}, 'token'), /too large/);
    assert.deepEqual((await callProvider(answering({ body: '{"a":1}' }), 'https://idp.example.com/userinfo', {}, 'user info')).body, { a: 1 });
  });

  it('JWKS: a redirect is no key set', async () => {
    const http = answering(redirect);
    const jwks = new RemoteJwks({ uri: 'https://as.example.com/jwks', http, clock: { now: () => 0 } });
    await assert.rejects(jwks.get('k1'), { error: 'temporarily_unavailable' });
    assert.deepEqual(http.urls, ['https://as.example.com/jwks']);
  });

  it('back-channel logout: a redirect is undelivered, and a loopback URI is refused without GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS', async () => {
    const client = { id: 'c1', backchannelLogoutUri: `${receiverUrl}/logout` } as Client;
    assert.deepEqual(await deliverLogout(outboundLogoutSender(answering(redirect)), client, 'token', 1000), { clientId: 'c1', ok: false, status: 302 });
    const strict = createOutbound({ allowPrivate: false });
    const relaxed = createOutbound({ allowPrivate: true });
    try {
      const refused = await deliverLogout(outboundLogoutSender(strict.request), client, 'token', 1000);
      assert.equal(refused.ok, false);
      assert.match(refused.error!, /127\.0\.0\.1 is reserved/);
      assert.equal(hits, 0);
      assert.equal((await deliverLogout(outboundLogoutSender(relaxed.request), client, 'token', 1000)).ok, true);
      assert.equal(hits, 1);
    } finally {
      strict.close();
      relaxed.close();
    }
  });

  it('setWebhook: the official descriptions for each refusal', async () => {
    const client = createOutbound({ allowPrivate: false, lookup: (_h, _o, cb) => cb(Object.assign(new Error('no'), { code: 'ENOTFOUND' }), []) });
    const check = botWebhookChecker(client.check);
    assert.equal(await check(new URL('https://[::127.0.0.1]/h')), 'IP address ::7f00:1 is reserved');
    assert.equal(await check(new URL('https://nowhere.example.com/h')), 'Failed to resolve host: Name or service not known');
    client.close();
  });
});
