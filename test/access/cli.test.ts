import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli as run } from '../helpers/cli.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';

const json = (r: { code: number | null; stdout: string; stderr: string }) => {
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim().split('\n').length, 1, 'one JSON object');
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

for (const { kind, skip } of await databaseKinds()) {
  describe(`gatehouse group and role (${kind})`, { skip }, () => {
    let dir: string;
    let env: Record<string, string>;
    let url: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'gh-access-cli-'));
      url = kind === 'sqlite' ? `sqlite:${join(dir, 'gh.db')}` : freshDatabaseUrl('postgres');
      env = { GATEHOUSE_DATABASE_URL: url };
      for (const u of ['ana', 'ben']) json(await run(['user', 'create', '--username', u, '--email', `${u}@example.test`, '--password-stdin', '--json'], env, 'a long enough password'));
    });
    after(async () => {
      if (kind === 'postgres') await dropDatabase(url);
      rmSync(dir, { recursive: true, force: true });
    });

    it('group create/add/remove/list print one JSON object each; errors go to stderr, non-zero', async () => {
      const g = json(await run(['group', 'create', '--name', 'ops', '--json'], env));
      assert.deepEqual(Object.keys(g).sort(), ['id', 'name']);
      assert.equal(g.name, 'ops');
      assert.equal(json(await run(['group', 'add', '--group', 'ops', '--username', 'ana', '--json'], env)).changed, true);
      assert.equal(json(await run(['group', 'add', '--group', 'ops', '--user', 'ben', '--json'], env)).changed, true);
      assert.equal(json(await run(['group', 'remove', '--group', 'ops', '--username', 'ben', '--json'], env)).changed, true);
      assert.deepEqual(json(await run(['group', 'list', '--json'], env)), { groups: [{ id: g.id, name: 'ops', members: ['ana'] }] });
      const dup = await run(['group', 'create', '--name', 'OPS', '--json'], env);
      assert.equal(dup.code, 1);
      assert.match(dup.stderr, /exists already/);
      assert.equal(dup.stdout, '');
      const nobody = await run(['group', 'add', '--group', 'ops', '--username', 'zed'], env);
      assert.equal(nobody.code, 1);
      assert.match(nobody.stderr, /no user zed/);
      const badName = await run(['group', 'create', '--name', 'has space'], env);
      assert.equal(badName.code, 1);
      assert.match(badName.stderr, /group name/);
    });

    it('role create/grant/revoke/list: to a person or a group, approvers with their limits', async () => {
      const r = json(await run(['role', 'create', '--name', 'deploy', '--approvers', 'ops', '--approvals', '2', '--max-minutes', '30', '--json'], env));
      assert.deepEqual({ ...r, id: undefined }, { id: undefined, name: 'deploy', approvers: 'ops', approvals: 2, max_minutes: 30 });
      json(await run(['role', 'create', '--name', 'reader', '--json'], env));
      assert.deepEqual(json(await run(['role', 'grant', '--role', 'reader', '--username', 'ben', '--json'], env)), { role: 'reader', username: 'ben', changed: true });
      assert.deepEqual(json(await run(['role', 'grant', '--role', 'reader', '--group', 'ops', '--json'], env)), { role: 'reader', group: 'ops', changed: true });
      const list = json(await run(['role', 'list', '--json'], env)).roles as Record<string, unknown>[];
      assert.deepEqual(list.map((x) => ({ ...x, id: undefined })), [
        { id: undefined, name: 'deploy', approvers: 'ops', approvals: 2, max_minutes: 30, users: [], groups: [] },
        { id: undefined, name: 'reader', users: ['ben'], groups: ['ops'] },
      ]);
      assert.equal(json(await run(['role', 'revoke', '--role', 'reader', '--group', 'ops', '--json'], env)).changed, true);
      for (const [args, msg] of [
        [['role', 'grant', '--role', 'reader', '--username', 'ben', '--group', 'ops'], /exactly one/],
        [['role', 'grant', '--role', 'nope', '--username', 'ben'], /no role nope/],
        [['role', 'create', '--name', 'x', '--approvers', 'ops', '--approvals', '0'], /approvals must be/],
        [['role', 'create', '--name', 'y', '--approvals', '2'], /only to a role with approvers/],
        [['role', 'create', '--name', 'z', '--approvers', 'nobody'], /no group nobody/],
      ] as const) {
        const bad = await run([...args], env);
        assert.equal(bad.code, 1, `${args.join(' ')}: ${bad.stdout}`);
        assert.match(bad.stderr, msg);
        assert.equal(bad.stdout, '');
      }
    });
  });
}
