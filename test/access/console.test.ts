import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import type { SignedIn } from '../helpers/people.js';
import { csrfOf, open, signedInAdmin, submit } from '../console/support.js';

/** Issue 28 item 1: groups and roles in the admin console: forms with its CSRF token, Post/Redirect/Get, an admin.action per change. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`console: groups and roles (${kind})`, { skip }, () => {
    let server: TestServer;
    let admin: SignedIn;
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_ROLES: 'auth' } });
      admin = await signedInAdmin(server);
      await server.createUser('ana');
    });
    after(() => server.close());

    const post = async (path: string, fields: Record<string, string>, from: string) => submit(admin, path, { csrf_token: await csrfOf(admin, from), ...fields });

    it('list, create, add members, grant; each change 303 to the list and one admin.action event', async () => {
      let res = await post('/admin/groups', { name: 'ops' }, '/admin/groups');
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), '/admin/groups?done=group');
      res = await post('/admin/groups/ops/members', { username: 'ana' }, '/admin/groups');
      assert.equal(res.status, 303);
      const groups = await (await open(admin, '/admin/groups?done=member')).text();
      assert.match(groups, /Member added\./);
      assert.match(groups, /<td data-label="Group">ops<\/td>[\s\S]*ana/);
      res = await post('/admin/roles', { name: 'deploy', approvers: 'ops', approvals: '1', max_minutes: '15' }, '/admin/roles');
      assert.equal(res.status, 303);
      res = await post('/admin/roles/deploy/grants', { group: 'ops' }, '/admin/roles');
      assert.equal(res.headers.get('location'), '/admin/roles?done=grant');
      const roles = await (await open(admin, '/admin/roles')).text();
      assert.match(roles, /deploy[\s\S]*group ops[\s\S]*1 approval\(s\) from ops, up to 15 minutes/);
      assert.deepEqual(await server.gh.access.store.rolesOf((await server.gh.storage.users.findByUsername('ana'))!.id, Date.now()), ['deploy']);
      const actions = (await server.gh.storage.events.list({ type: 'admin.action', limit: 50 })).map((e) => (e.data as { action: string }).action);
      assert.deepEqual(actions.filter((a) => /^(group|role)\./.test(a)).sort(), ['group.add_member', 'group.create', 'role.create', 'role.grant']);
    });

    it('a refused change shows the list with why; a form without the CSRF token is refused', async () => {
      const dup = await post('/admin/groups', { name: 'OPS' }, '/admin/groups');
      assert.equal(dup.status, 409);
      assert.match(await dup.text(), /exists already/);
      const nobody = await post('/admin/roles/deploy/grants', { username: 'zed' }, '/admin/roles');
      assert.equal(nobody.status, 404);
      const forged = await submit(admin, '/admin/groups', { csrf_token: 'forged', name: 'x' });
      assert.equal(forged.status, 403);
      assert.equal(await server.gh.access.store.groupByName('x'), undefined);
    });
  });
}
