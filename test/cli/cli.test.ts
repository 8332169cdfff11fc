import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { track } from '../helpers/children.js';
import { BIN, runCli as run } from '../helpers/cli.js';

describe('gatehouse command line', () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gh-cli-'));
    env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gh.db')}`, GATEHOUSE_LOG_LEVEL: 'info' };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('user create --json prints exactly one JSON object and stores no plain password', async () => {
    const r = await run(['user', 'create', '--username', 'carol', '--email', 'carol@example.test', '--password-stdin', '--json'], env, 'a long enough password\n');
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out).sort(), ['email', 'id', 'username']);
    assert.equal(out.username, 'carol');
    assert.equal(r.stdout.trim().split('\n').length, 1);
  });

  it('user create refuses a duplicate (any case), a short password and a missing --password-stdin', async () => {
    const dup = await run(['user', 'create', '--username', 'CAROL', '--email', 'c2@example.test', '--password-stdin', '--json'], env, 'another long password');
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /taken/);
    assert.equal(dup.stdout, '');
    const short = await run(['user', 'create', '--username', 'dave', '--email', 'd@example.test', '--password-stdin'], env, 'short');
    assert.notEqual(short.code, 0);
    assert.match(short.stderr, /password/);
    const noStdin = await run(['user', 'create', '--username', 'erin', '--email', 'e@example.test', '--password', 'x'], env);
    assert.notEqual(noStdin.code, 0);
  });

  it('client create --json prints the documented fields; the secret is >= 256 bits', async () => {
    const r = await run(['client', 'create', '--name', 'Shop', '--redirect-uri', 'https://shop.example.test/cb', '--redirect-uri', 'https://shop.example.test/cb2',
      '--grant-types', 'authorization_code,refresh_token,client_credentials', '--scope', 'user read', '--trusted', '--introspect',
      '--domain', 'shop.example.test', '--token-format', 'opaque', '--auth-method', 'client_secret_post', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.ok(out.client_id);
    assert.ok(Buffer.from(out.client_secret, 'base64url').length >= 32);
    assert.deepEqual(out.redirect_uris, ['https://shop.example.test/cb', 'https://shop.example.test/cb2']);
    assert.deepEqual(out.grant_types, ['authorization_code', 'refresh_token', 'client_credentials']);
    assert.equal(out.scope, 'user read');
  });

  it('client create --public has no secret; bad input exits non-zero with a message on stderr', async () => {
    const pub = await run(['client', 'create', '--name', 'SPA', '--redirect-uri', 'http://127.0.0.1:5000/cb', '--public', '--json'], env);
    assert.equal(pub.code, 0, pub.stderr);
    assert.equal(JSON.parse(pub.stdout).client_secret, undefined);
    for (const bad of [
      ['--name', 'X', '--redirect-uri', 'http://evil.example/cb'],
      ['--name', 'X', '--redirect-uri', 'https://a.example/cb#frag'],
      ['--name', 'X', '--redirect-uri', 'https://other.example/cb', '--domain', 'shop.example.test'],
      ['--name', 'X', '--redirect-uri', 'https://a.example/cb', '--grant-types', 'magic'],
      ['--name', 'X'],
      ['--name', 'X', '--redirect-uri', 'https://a.example/cb', '--token-format', 'xml'],
      ['--name', 'X', '--redirect-uri', 'https://a.example/cb', '--public', '--grant-types', 'client_credentials'],
      ['--name', 'X', '--bogus-flag'],
    ]) {
      const r = await run(['client', 'create', ...bad, '--json'], env);
      assert.notEqual(r.code, 0, `accepted: ${bad.join(' ')}`);
      assert.equal(r.stdout, '', `printed on stdout for ${bad.join(' ')}`);
      assert.ok(r.stderr.length > 0);
    }
  });

  it('unknown commands print usage and exit 2', async () => {
    const r = await run(['frobnicate'], env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /usage/);
  });

  it('serve on port 0 logs its URL, answers health and metadata, and exits 0 on SIGTERM', async () => {
    const child = track(spawn(process.execPath, [BIN, 'serve', '--auth-port', '0', '--api-port', '0', '--bot-port', '0'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
    let log = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start line:\n${log}`)), 30_000);
      child.stdout.on('data', (d) => {
        log += d;
        const m = /"auth_url":"([^"]+)"/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    assert.equal((await fetch(`${url}/readyz`)).status, 200);
    const meta = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
    assert.equal(meta.issuer, url);
    const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    assert.equal(await exit, 0);
  });

  it('keys rotate keeps the previous key published', async () => {
    const first = await run(['keys', 'rotate', '--json'], env);
    assert.equal(first.code, 0, first.stderr);
    const second = await run(['keys', 'rotate', '--json'], env);
    assert.equal(second.code, 0, second.stderr);
    assert.notEqual(JSON.parse(first.stdout).kid, JSON.parse(second.stdout).kid);
  });
});
