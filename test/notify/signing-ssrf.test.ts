import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret, signedHeaders, verifySignature } from '../../src/core/notify/signing.js';
import { JITTER, nextAttemptAt, RETRY_DELAYS_MS } from '../../src/core/notify/schedule.js';
import { webhookUrlProblem as problemWith } from '../../src/core/notify/endpoints.js';
import { notifyTransport } from '../../src/core/notify/transport.js';
import { parseRetryAfter } from '../../src/core/outbound.js';
import { reservedRange } from '../../src/infra/outbound/addresses.js';
import { createOutbound } from '../../src/infra/outbound/client.js';

// The one outbound module (src/infra/outbound/) behind what this file tested before it existed.
const isPrivateAddress = (a: string) => reservedRange(a) !== undefined;
const webhookUrlProblem = (url: string, allowPrivate: boolean) => problemWith(url, createOutbound({ allowPrivate }).check);

describe('Standard Webhooks signing', () => {
  it('produces what the standardwebhooks library verifies, with both secrets during a rotation', () => {
    const secret = newWebhookSecret();
    assert.match(secret, /^whsec_/);
    assert.equal(Buffer.from(secret.slice(6), 'base64').length, 32);
    const old = newWebhookSecret();
    const body = JSON.stringify({ type: 'client.created', timestamp: new Date().toISOString(), data: { client_id: 'x' } });
    const headers = signedHeaders([secret, old], 'msg_1', Math.floor(Date.now() / 1000), body);
    assert.equal(headers['webhook-signature']!.split(' ').length, 2);
    for (const s of [secret, old]) {
      assert.deepEqual(new Webhook(s).verify(body, headers), JSON.parse(body));
      assert.equal(verifySignature(s, headers, body), true);
    }
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
    assert.throws(() => new Webhook(secret).verify(`${body} `, headers));
  });
});

describe('retry schedule', () => {
  it('follows 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h within the jitter, then stops', () => {
    for (const [i, base] of RETRY_DELAYS_MS.entries()) {
      for (const r of [0, 0.5, 0.999]) {
        const d = nextAttemptAt(i + 1, 0, () => r)!;
        assert.ok(d >= base * (1 - JITTER) && d <= base * (1 + JITTER), `${d} near ${base}`);
      }
    }
    assert.equal(nextAttemptAt(RETRY_DELAYS_MS.length + 1, 0, () => 0.5), undefined);
  });

  it('honours a longer Retry-After (seconds or HTTP date), capped at a day', () => {
    assert.equal(nextAttemptAt(1, 0, () => 0.5, 60_000), 60_000);
    assert.equal(nextAttemptAt(1, 0, () => 0.5, 10 * 86_400_000), 86_400_000);
    assert.equal(parseRetryAfter('120', 0), 120_000);
    assert.equal(parseRetryAfter(new Date(90_000).toUTCString(), 30_000), 60_000);
    assert.equal(parseRetryAfter('soon', 0), undefined);
  });
});

describe('SSRF guard', () => {
  it('classifies loopback, private, link-local, mapped and documentation addresses as private', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe']) {
      assert.equal(isPrivateAddress(a), true, a);
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.equal(isPrivateAddress(a), false, a);
  });

  it('refuses private URLs unless allowed, and URLs with credentials always', async () => {
    assert.match((await webhookUrlProblem('http://127.0.0.1:8080/hook', false))!, /private/);
    assert.match((await webhookUrlProblem('http://[::1]/hook', false))!, /private/);
    assert.match((await webhookUrlProblem('http://localhost/hook', false))!, /local/);
    assert.match((await webhookUrlProblem('http://metadata.internal/', false))!, /local/);
    assert.equal(await webhookUrlProblem('https://hooks.example.test/h', false), undefined);
    assert.equal(await webhookUrlProblem('http://127.0.0.1:8080/hook', true), undefined);
    assert.match((await webhookUrlProblem('https://u:p@hooks.example.test/h', true))!, /credentials/);
    assert.match((await webhookUrlProblem('ftp://hooks.example.test/h', true))!, /http/);
  });

  it('checks the resolved address when it connects (a name that resolves to loopback is refused)', async () => {
    const client = createOutbound({ allowPrivate: false });
    const t = notifyTransport(client.request);
    try {
      const byName = await t.post({ url: 'http://localhost:9/hook', headers: {}, body: '{}', timeoutMs: 2000 });
      assert.equal(byName.status, null);
      assert.match(byName.error!, /private|loopback/);
      const literal = await t.post({ url: 'http://127.0.0.1:9/hook', headers: {}, body: '{}', timeoutMs: 2000 });
      assert.match(literal.error!, /private|loopback/);
    } finally {
      client.close();
    }
  });
});
