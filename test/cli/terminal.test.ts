import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { track } from '../helpers/children.js';
import { BIN, runCli as run } from '../helpers/cli.js';
import { COMMAND_NAMES, COMMAND_SPECS, closestCommand } from '../../src/cli/commands.js';
import { logFormatFor, startBanner, textLine } from '../../src/cli/terminal.js';

const VERSION = (JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version;

describe('a friendly terminal', () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gh-term-'));
    env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gh.db')}` };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('`<command> --help` and `help <command>` explain every option of every command, on stdout, exit 0', async () => {
    for (const name of COMMAND_NAMES) {
      const words = name.split(' ');
      for (const args of [[...words, '--help'], ['help', ...words]]) {
        const r = await run(args, env);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stdout, new RegExp(`^usage: gatehouse ${name} `), args.join(' '));
        for (const [opt, spec] of Object.entries(COMMAND_SPECS[name].options)) {
          // Each option on a line of its own with its explanation.
          assert.match(r.stdout, new RegExp(`\\n  --${opt}\\b[^\\n]* {2}${spec.help.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), `${name}: --${opt}`);
        }
        assert.match(r.stdout, /--database-url +GATEHOUSE_DATABASE_URL/);
      }
    }
  });

  it('client create --help is not an error even with other flags around it; nothing is created', async () => {
    const r = await run(['client', 'create', '--name', 'X', '--help'], env);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /--redirect-uri U …  +where the authorization code is sent/);
    const list = await run(['client', 'list', '--json'], env);
    assert.deepEqual(JSON.parse(list.stdout).clients, []);
  });

  it('a wrong command says "unknown command", suggests the nearest one, exits 2', async () => {
    const near = await run(['clinet', 'craete', '--name', 'x'], env);
    assert.equal(near.code, 2);
    assert.equal(near.stdout, '');
    assert.match(near.stderr, /^gatehouse: unknown command "clinet craete"; did you mean "gatehouse client create"\?\n/);
    const far = await run(['frobnicate'], env);
    assert.equal(far.code, 2);
    assert.match(far.stderr, /^gatehouse: unknown command "frobnicate"\nusage: /);
    const help = await run(['help', 'nope'], env);
    assert.equal(help.code, 2);
    assert.match(help.stderr, /unknown command "nope"/);
    assert.equal(closestCommand(['serv']), 'serve');
    assert.equal(closestCommand(['keys']), 'keys rotate');
    assert.equal(closestCommand(['webhook', 'replya']), 'webhook replay');
    assert.equal(closestCommand(['zzzzzz']), undefined);
  });

  it('a wrong option names the command and prints its help, exit 2', async () => {
    const r = await run(['client', 'create', '--nmae', 'x'], env);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^gatehouse client create: Unknown option '--nmae'/);
    assert.match(r.stderr, /usage: gatehouse client create/);
  });

  it('--version prints the package version', async () => {
    const r = await run(['--version'], env);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `gatehouse ${VERSION}\n`);
  });

  it('a busy port: one line naming the port and the setting to change, no stack trace, exit 1', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const auth = await run(['serve', '--auth-port', String(port), '--api-port', '0', '--bot-port', '0'], env);
      assert.equal(auth.code, 1);
      assert.equal(auth.stderr, `gatehouse: port ${port} on 127.0.0.1 is in use: set GATEHOUSE_AUTH_PORT or --auth-port to a free port (0 picks one)\n`);
      const bot = await run(['serve', '--auth-port', '0', '--api-port', '0'], { ...env, GATEHOUSE_BOT_PORT: String(port) });
      assert.equal(bot.code, 1);
      assert.match(bot.stderr, new RegExp(`^gatehouse: port ${port} on 127\\.0\\.0\\.1 is in use: set GATEHOUSE_BOT_PORT or --bot-port`));
      assert.doesNotMatch(bot.stderr, /\n\s+at /);
      const metrics = await run(['serve', '--auth-port', '0', '--api-port', '0', '--bot-port', '0', '--metrics-port', String(port)], env);
      assert.equal(metrics.code, 1);
      assert.match(metrics.stderr, new RegExp(`^gatehouse: port ${port} on 127\\.0\\.0\\.1 is in use: set GATEHOUSE_METRICS_PORT or --metrics-port`));
    } finally {
      blocker.close();
    }
  });

  it('JSON logs when output is not a terminal or when asked; text on a terminal otherwise', () => {
    assert.equal(logFormatFor({ logFormat: undefined }, false), 'json');
    assert.equal(logFormatFor({ logFormat: undefined }, true), 'text');
    assert.equal(logFormatFor({ logFormat: 'json' }, true), 'json');
    assert.equal(logFormatFor({ logFormat: 'text' }, false), 'text');
    assert.equal(textLine('{"level":30,"time":0,"msg":"Server listening at http://127.0.0.1:1"}'), '00:00:00 INFO  Server listening at http://127.0.0.1:1\n');
    assert.equal(textLine('{"level":40,"time":0,"msg":"purge failed","err":{"message":"disk"},"n":1}'), '00:00:00 WARN  purge failed (disk)  n=1\n');
  });

  it('the banner shows the URLs, and the exact command for the first user only when there is none', () => {
    const b = { version: '1.2.3', authUrl: 'http://127.0.0.1:8080', apiUrl: 'http://127.0.0.1:8081', botUrl: 'http://127.0.0.1:8082', metricsUrl: undefined, databaseUrl: 'sqlite:./data/gatehouse.db' };
    const empty = startBanner({ ...b, hasUser: false });
    for (const u of [b.authUrl, b.apiUrl, b.botUrl, `${b.authUrl}/admin`]) assert.ok(empty.includes(u), u);
    assert.match(empty, /\n {2}echo 'choose a long password' \| npx gatehouse user create --username admin --email admin@example\.com --password-stdin --admin\n/);
    assert.doesNotMatch(startBanner({ ...b, hasUser: true }), /user create/);
    // Another database: the command names it, so the user lands where the server looks.
    assert.match(startBanner({ ...b, hasUser: false, databaseUrl: 'sqlite:/tmp/x y.db' }), /--admin --database-url 'sqlite:\/tmp\/x y\.db'\n/);
  });

  const hasScript = spawnSync('script', ['--version']).status === 0;
  it('serve on a terminal prints the banner (URLs, next command) instead of JSON; piped output stays JSON', { skip: !hasScript && 'no script(1)' }, async () => {
    const db = join(dir, 'banner.db');
    const cmd = `GATEHOUSE_DATABASE_URL=sqlite:${db} ${process.execPath} ${BIN} serve --auth-port 0 --api-port 0 --bot-port 0`;
    // script(1) runs the command on a pseudo-terminal: stdout is a TTY, as for a person.
    const child = track(spawn('script', ['-qec', cmd, '/dev/null'], { env: { ...process.env, GATEHOUSE_LOG_FORMAT: '', GATEHOUSE_LOG_LEVEL: 'info' }, stdio: ['pipe', 'pipe', 'pipe'], detached: true }), true);
    let out = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner:\n${out}`)), 30_000);
        child.stdout.on('data', (d) => {
          out += d;
          if (/Stop with Ctrl\+C/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
    assert.match(out, /Gatehouse \d+\.\d+\.\d+ is running/);
    assert.match(out, /authorization server +http:\/\/127\.0\.0\.1:\d+ +sign-in pages, admin console http:\/\/127\.0\.0\.1:\d+\/admin/);
    assert.match(out, /chat-bot interface +http:\/\/127\.0\.0\.1:\d+/);
    assert.match(out, /npx gatehouse user create --username admin .* --admin --database-url 'sqlite:/);
    assert.doesNotMatch(out, /\{"level"/);
    assert.match(out, /INFO {2}Server listening at http/);
  });
});
