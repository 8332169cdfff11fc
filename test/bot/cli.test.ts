import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli as run } from '../helpers/cli.js';
import { loadConfig } from '../../src/config.js';
import { startGatehouse } from '../../src/server.js';

describe('gatehouse bot create', () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gh-bot-cli-'));
    env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gh.db')}`, GATEHOUSE_LOG_LEVEL: 'silent' };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('prints {id, username, token} once, and the token works against the Bot API', async () => {
    const user = await run(['user', 'create', '--username', 'dana', '--email', 'dana@example.test', '--password-stdin'], env, 'a long enough password\n');
    assert.equal(user.code, 0, user.stderr);
    const r = await run(['bot', 'create', '--owner', 'dana', '--username', 'Dana_cli_bot', '--name', 'Dana CLI', '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 1);
    const out = JSON.parse(r.stdout) as { id: number; username: string; token: string };
    assert.deepEqual(Object.keys(out).sort(), ['id', 'token', 'username']);
    assert.equal(out.username, 'Dana_cli_bot');
    assert.match(out.token, new RegExp(`^${out.id}:[A-Za-z0-9_-]{35}$`));

    const taken = await run(['bot', 'create', '--owner', 'dana', '--username', 'dana_CLI_bot', '--name', 'Again', '--json'], env);
    assert.equal(taken.code, 1);
    assert.match(taken.stderr, /already taken/);
    const bad = await run(['bot', 'create', '--owner', 'dana', '--username', 'nope', '--name', 'X', '--json'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /must end in 'bot'/);
    const noOwner = await run(['bot', 'create', '--owner', 'ghost', '--username', 'ghost_bot', '--name', 'X', '--json'], env);
    assert.equal(noOwner.code, 1);

    const running = await startGatehouse(loadConfig({ ...env, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_ROLES: 'bot' }));
    try {
      const me = await fetch(`${running.bot!.url}/bot${out.token}/getMe`);
      assert.equal(me.status, 200);
      assert.equal(((await me.json()) as { result: { id: number } }).result.id, out.id);
    } finally {
      await running.close();
    }
  });
});
