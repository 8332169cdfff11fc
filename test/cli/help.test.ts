import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli as run } from '../helpers/cli.js';
import { COMMAND_NAMES } from '../../src/cli/commands.js';
import { nearestFlag } from '../../src/cli/help.js';
import { flagOf, SETTING_NAMES } from '../../src/settings.js';

/** The first words of commands that have two (`webhook`, `user`, …), from the declarations: a group added later is covered. */
const GROUPS = [...new Set(COMMAND_NAMES.filter((n) => n.includes(' ')).map((n) => n.split(' ')[0]!))];

describe('help and mistakes on the command line (issue 27 item 7)', () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gh-help-'));
    env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gh.db')}` };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('`gatehouse --help` is short: the commands, and a line pointing at `gatehouse help settings`', async () => {
    const r = await run(['--help'], env);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /`gatehouse help settings` lists them/);
    for (const name of SETTING_NAMES) assert.doesNotMatch(r.stdout, new RegExp(`--${flagOf(name)} +${name} `), `${name} in --help`);
    assert.ok(r.stdout.split('\n').length <= COMMAND_NAMES.length + 12, `${r.stdout.split('\n').length} lines`);
    for (const name of COMMAND_NAMES) assert.match(r.stdout, new RegExp(`\\n  ${name} `));
  });

  it('`gatehouse help settings` lists every setting with its flag', async () => {
    const r = await run(['help', 'settings'], env);
    assert.equal(r.code, 0, r.stderr);
    for (const name of SETTING_NAMES) assert.match(r.stdout, new RegExp(`--${flagOf(name)} +${name} `));
  });

  it('every command group answers --help and `help <group>` with its commands', async () => {
    assert.ok(GROUPS.includes('webhook') && GROUPS.includes('user'));
    for (const group of GROUPS) {
      for (const args of [[group, '--help'], ['help', group], ...(group === 'webhook' ? [[group, '-h']] : [])]) {
        const r = await run(args, env);
        assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
        assert.doesNotMatch(r.stdout + r.stderr, /unknown command/);
        assert.match(r.stdout, new RegExp(`^usage: gatehouse ${group} <`));
        for (const name of COMMAND_NAMES.filter((n) => n.startsWith(`${group} `))) assert.match(r.stdout, new RegExp(`\\n  ${name} +\\S`), `${args.join(' ')}: ${name}`);
      }
    }
    // The group word alone is a mistake (exit 2), answered with the same list.
    const bare = await run(['webhook'], env);
    assert.equal(bare.code, 2);
    assert.equal(bare.stdout, '');
    assert.match(bare.stderr, /^usage: gatehouse webhook <create\|list\|/);
  });

  it('a mistyped flag gets "did you mean" (command flags and settings flags); a far one does not', async () => {
    const r = await run(['user', 'create', '--usernme', 'x', '--password-stdin'], env, 'a long enough password');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^gatehouse user create: Unknown option '--usernme'\. Did you mean --username\?\n/);
    assert.doesNotMatch(r.stderr, /positional/);
    const setting = await run(['client', 'list', '--auth-prot', '0'], env);
    assert.equal(setting.code, 2);
    assert.match(setting.stderr, /Did you mean --auth-port\?/);
    const webhook = await run(['webhook', 'replay', '--sinse', '2026-01-01T00:00:00Z'], env);
    assert.match(webhook.stderr, /Unknown option '--sinse'\. Did you mean --since\?/);
    const far = await run(['client', 'list', '--frobnicate'], env);
    assert.equal(far.code, 2);
    assert.match(far.stderr, /Unknown option '--frobnicate'\.\n/);
    assert.equal(nearestFlag('--jsno', ['json', 'name']), '--json');
    assert.equal(nearestFlag('--NAME=x', ['json', 'name']), '--name');
  });

  it('`user create --admin` prints the console\'s real URL from the settings', async () => {
    const r = await run(['user', 'create', '--username', 'root', '--email', 'root@example.test', '--password-stdin', '--admin', '--auth-url', 'https://login.example.test/'], env, 'a long enough password\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /admin console at https:\/\/login\.example\.test\/admin\n$/);
    const byPort = await run(['user', 'create', '--username', 'root2', '--email', 'root2@example.test', '--password-stdin', '--admin', '--auth-port', '9443'], env, 'a long enough password\n');
    assert.equal(byPort.code, 0, byPort.stderr);
    assert.match(byPort.stdout, /admin console at http:\/\/[^/\s]+:9443\/admin\n$/);
    assert.doesNotMatch(r.stdout + byPort.stdout, /[{}]/);
  });
});
