import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { openStorage } from '../../src/store/index.js';

describe('gatehouse user create --admin', { timeout: 60_000 }, () => {
  let dir: string;
  let env: Record<string, string>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gh-cli-admin-'));
    env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gh.db')}`, GATEHOUSE_LOG_LEVEL: 'silent' };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('marks the account as an administrator; without the flag it is not one; --json prints the same object', async () => {
    const admin = await runCli(['user', 'create', '--username', 'root', '--email', 'root@example.test', '--password-stdin', '--admin', '--json'], env, 'a long enough password\n');
    assert.equal(admin.code, 0, admin.stderr);
    const made = JSON.parse(admin.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(made).sort(), ['email', 'id', 'username']);
    const plain = await runCli(['user', 'create', '--username', 'dave', '--email', 'dave@example.test', '--password-stdin'], env, 'a long enough password\n');
    assert.equal(plain.code, 0, plain.stderr);
    const human = await runCli(['user', 'create', '--username', 'erin', '--email', 'erin@example.test', '--password-stdin', '--admin'], env, 'a long enough password\n');
    assert.match(human.stdout, /administrator.*\/admin/);

    const storage = await openStorage(env.GATEHOUSE_DATABASE_URL!);
    try {
      const store = storage.console;
      assert.equal(await store.isAdmin(made.id!), true);
      assert.equal(await store.isAdmin((await storage.users.findByUsername('dave'))!.id), false);
      assert.equal(await store.isAdmin((await storage.users.findByUsername('erin'))!.id), true);
    } finally {
      await storage.close();
    }
  });

  it('--admin takes no value', async () => {
    const r = await runCli(['user', 'create', '--username', 'frank', '--email', 'f@example.test', '--password-stdin', '--admin=yes'], env, 'a long enough password\n');
    assert.notEqual(r.code, 0);
  });
});
