/**
 * `npm start` runs the esbuild bundle in dist/app/ (scripts/build.mjs, built
 * first when stale): what src/ reads from disk or loads lazily must still be
 * found from the bundle: the chat page's static files, package.json, the
 * cookie module @fastify/cookie imports, a lazily loaded command.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { track } from '../helpers/children.js';
import { BIN, runCli } from '../helpers/cli.js';

const ROOT = join(import.meta.dirname, '../..');
const COMPILED = { GATEHOUSE_COMPILED: '1' };

describe('the compiled start (npm start)', { timeout: 180_000 }, () => {
  let dir: string;
  let stop: () => Promise<void>;
  let urls: { auth_url: string; bot_api_url: string };
  let stderr = '';
  let pid: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gh-compiled-'));
    // Stale on purpose: this start builds first, as the first `npm start` of a clone does.
    const { BUILT } = await import('../../scripts/freshness.mjs');
    if (existsSync(BUILT)) utimesSync(BUILT, new Date(0), new Date(0));
    const child = track(spawn(process.execPath, [BIN, 'serve', '--roles', 'auth,api,bot', '--host', '127.0.0.1', '--auth-port', '0', '--api-port', '0', '--bot-port', '0'], {
      env: { ...process.env, ...COMPILED, GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}`, GATEHOUSE_LOG_FORMAT: 'json', GATEHOUSE_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    stop = async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    };
    pid = child.pid!;
    child.stderr!.on('data', (d) => (stderr += d));
    urls = await new Promise((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const line = out.split('\n').find((l) => l.includes('Gatehouse ready'));
        if (line) resolve(JSON.parse(line));
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}${stderr}`)));
    });
  });
  after(async () => {
    await stop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('built first, then runs alone: no esbuild service process left beside the server', () => {
    assert.match(stderr, /building dist\//);
    assert.equal(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim(), '');
  });

  it('runs the bundle named by dist/.built, which is then fresh', async () => {
    const f = await import('../../scripts/freshness.mjs');
    assert.ok(existsSync(fileURLToPath(f.builtEntry())), f.builtEntry());
    assert.equal(f.distIsFresh(), true);
  });

  it('serves the chat page and its static files (read beside the bundle)', async () => {
    const page = await fetch(`${urls.bot_api_url}/`);
    assert.equal(page.status, 200);
    for (const asset of ['chat.js', 'chat.css']) {
      const res = await fetch(`${urls.bot_api_url}/assets/${asset}`);
      assert.equal(res.status, 200, asset);
      assert.equal(await res.text(), readFileSync(join(ROOT, 'src/http/bot/static', asset), 'utf8'));
    }
  });

  it('sets cookies (@fastify/cookie imports the cookie module at run time)', async () => {
    const res = await fetch(`${urls.auth_url}/login`);
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get('set-cookie') ?? '', /=/);
    assert.match(await res.text(), /<form/);
  });

  it('--version reads package.json and a database command loads its lazy chunk', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const v = await runCli(['--version'], COMPILED);
    assert.equal(v.stdout, `gatehouse ${version}\n`, v.stderr);
    const user = await runCli(['user', 'create', '--username', 'carol', '--email', 'carol@example.test', '--password-stdin', '--json'],
      { ...COMPILED, GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}` }, 'a long enough password\n');
    assert.equal(user.code, 0, user.stderr);
    assert.equal(JSON.parse(user.stdout).username, 'carol');
  });

  it('is stale once a file in src/ is newer than the build', async () => {
    const f = await import('../../scripts/freshness.mjs');
    const { atime, mtime } = statSync(f.BUILT);
    try {
      utimesSync(f.BUILT, new Date(0), new Date(0));
      assert.equal(f.distIsFresh(), false);
    } finally {
      utimesSync(f.BUILT, atime, mtime);
    }
  });
});
