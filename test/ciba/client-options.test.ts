import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { admin, ADMIN_TOKEN } from '../notify/support.js';

const CIBA = 'urn:openid:params:grant-type:ciba';
const DEVICE = 'urn:ietf:params:oauth:grant-type:device_code';

describe('CIBA client options: command line and admin API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gh-ciba-'));
  const env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}` };
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN } });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('client create --backchannel-token-delivery-mode ping --backchannel-notification-endpoint U', async () => {
    const r = await runCli(['client', 'create', '--name', 'Agent', '--grant-types', `${CIBA},${DEVICE}`, '--scope', 'openid user',
      '--backchannel-token-delivery-mode', 'ping', '--backchannel-notification-endpoint', 'https://agent.example.test/ciba', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as Record<string, unknown>;
    assert.deepEqual(out.grant_types, [CIBA, DEVICE]);
    assert.equal(out.backchannel_token_delivery_mode, 'ping');
    assert.equal(out.backchannel_client_notification_endpoint, 'https://agent.example.test/ciba');
    const listed = JSON.parse((await runCli(['client', 'list', '--json'], env)).stdout) as { clients: Record<string, unknown>[] };
    assert.equal(listed.clients.find((c) => c.client_id === out.client_id)?.backchannel_token_delivery_mode, 'ping');
  });

  it('bad values stop the command with the reason', async () => {
    for (const [args, message] of [
      [['--backchannel-token-delivery-mode', 'push'], /must be one of poll, ping/],
      [['--backchannel-token-delivery-mode', 'ping'], /needs --backchannel-notification-endpoint/],
      [['--backchannel-token-delivery-mode', 'ping', '--backchannel-notification-endpoint', 'javascript:alert(1)'], /absolute http/],
    ] as const) {
      const r = await runCli(['client', 'create', '--name', 'Bad', '--grant-types', CIBA, ...args, '--json'], env);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, message);
    }
  });

  it('the admin API takes the registration names', async () => {
    const created = await admin(server.url, 'POST', '/clients', {
      client_name: 'Agent', grant_types: [CIBA], scope: 'openid user', backchannel_token_delivery_mode: 'poll',
    });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.backchannel_token_delivery_mode, 'poll');
    const bad = await admin(server.url, 'POST', '/clients', { client_name: 'Agent', grant_types: [CIBA], backchannel_token_delivery_mode: 'ping' });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error, 'invalid_request');
    const wrongType = await admin(server.url, 'POST', '/clients', { client_name: 'Agent', grant_types: [CIBA], backchannel_token_delivery_mode: 5 });
    assert.equal(wrongType.status, 400);
  });
});
