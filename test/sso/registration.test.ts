import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { track } from '../helpers/children.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'admin-test-credential-sso-0123456789';
const BIN = join(import.meta.dirname, '../../bin/gatehouse.mjs');

/** Registering where an application wants people back after sign-out and where its logout tokens go. */
describe('client registration: post_logout_redirect_uris and backchannel_logout_uri', () => {
  let server: TestServer;
  const post = (body: unknown) => fetch(`${server.url}/admin/clients`, {
    method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });

  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
  });
  after(() => server.close());

  it('admin API: stored and shown with their RFC names', async () => {
    const res = await post({
      client_name: 'Shop', redirect_uris: ['https://shop.example.test/cb'], scope: 'openid',
      post_logout_redirect_uris: ['https://shop.example.test/bye', 'http://127.0.0.1:3001/'], backchannel_logout_uri: 'https://shop.example.test/backchannel',
    });
    assert.equal(res.status, 201);
    const made = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(made.post_logout_redirect_uris, ['https://shop.example.test/bye', 'http://127.0.0.1:3001/']);
    assert.equal(made.backchannel_logout_uri, 'https://shop.example.test/backchannel');
    const read = (await (await fetch(`${server.url}/admin/clients/${made.client_id}`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as Record<string, unknown>;
    assert.deepEqual(read.post_logout_redirect_uris, made.post_logout_redirect_uris);
    assert.equal(read.backchannel_logout_uri, made.backchannel_logout_uri);

    const plain = (await (await post({ client_name: 'Plain', redirect_uris: ['https://p.example.test/cb'] })).json()) as Record<string, unknown>;
    assert.deepEqual(plain.post_logout_redirect_uris, []);
    assert.equal(plain.backchannel_logout_uri, null);
  });

  it('admin API: the same rules as redirect URIs, RFC-shaped 400s', async () => {
    const base = { client_name: 'Bad', redirect_uris: ['https://b.example.test/cb'] };
    for (const extra of [
      { post_logout_redirect_uris: ['http://b.example.test/bye'] },
      { post_logout_redirect_uris: ['https://b.example.test/bye#frag'] },
      { post_logout_redirect_uris: 'not a uri' },
      { post_logout_redirect_uris: [42] },
      { backchannel_logout_uri: 'com.example.app:/logout' },
      { backchannel_logout_uri: 'https://b.example.test/bc#x' },
      { backchannel_logout_uri: 7 },
      { domain: 'b.example.test', backchannel_logout_uri: 'https://elsewhere.example.test/bc' },
    ]) {
      const res = await post({ ...base, ...extra });
      assert.equal(res.status, 400, JSON.stringify(extra));
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_request');
    }
  });

  it('command line: --post-logout-redirect-uri (repeatable) and --backchannel-logout-uri', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gh-sso-cli-'));
    try {
      const args = ['client', 'create', '--name', 'Site A', '--redirect-uri', 'http://127.0.0.1:3001/callback',
        '--post-logout-redirect-uri', 'http://127.0.0.1:3001/', '--post-logout-redirect-uri', 'http://127.0.0.1:3001/bye',
        '--backchannel-logout-uri', 'http://127.0.0.1:3001/backchannel-logout', '--scope', 'openid profile', '--json'];
      const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = track(spawn(process.execPath, [BIN, ...args], { env: { ...process.env, GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gh.db')}` } }));
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.stderr.on('data', (d) => (stderr += d));
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      assert.equal(out.code, 0, out.stderr);
      const made = JSON.parse(out.stdout) as Record<string, unknown>;
      assert.deepEqual(made.post_logout_redirect_uris, ['http://127.0.0.1:3001/', 'http://127.0.0.1:3001/bye']);
      assert.equal(made.backchannel_logout_uri, 'http://127.0.0.1:3001/backchannel-logout');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
