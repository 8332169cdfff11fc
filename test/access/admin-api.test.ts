import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'an-admin-token-long-enough-for-the-test-1234';

/** Issue 28 item 1: /admin/groups and /admin/roles behind the admin bearer token, JSON in and out, standard errors. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`admin API: groups and roles (${kind})`, { skip }, () => {
    let server: TestServer;
    const call = async (method: string, path: string, body?: unknown, token = ADMIN) => {
      const res = await fetch(`${server.url}/admin${path}`, {
        method, headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
      await server.createUser('ana');
      await server.createUser('ben');
    });
    after(() => server.close());

    it('groups: create, add and remove members, list', async () => {
      const g = await call('POST', '/groups', { name: 'ops' });
      assert.equal(g.status, 201);
      assert.deepEqual(Object.keys(g.body).sort(), ['id', 'name']);
      assert.deepEqual((await call('POST', '/groups/ops/members', { username: 'ana' })).body, { group: 'ops', username: 'ana', changed: true });
      assert.deepEqual((await call('POST', '/groups/ops/members', { username: 'ben' })).body, { group: 'ops', username: 'ben', changed: true });
      assert.deepEqual((await call('DELETE', '/groups/ops/members/ben')).body, { group: 'ops', username: 'ben', changed: true });
      assert.deepEqual((await call('GET', '/groups')).body, { groups: [{ id: g.body.id, name: 'ops', members: ['ana'] }] });
    });

    it('roles: create with approvers, grant to a person and a group, revoke, list', async () => {
      const r = await call('POST', '/roles', { name: 'deploy', approvers: 'ops', approvals: 2, max_minutes: 45 });
      assert.equal(r.status, 201);
      assert.deepEqual({ ...r.body, id: undefined }, { id: undefined, name: 'deploy', approvers: 'ops', approvals: 2, max_minutes: 45 });
      assert.deepEqual((await call('POST', '/roles/deploy/grants', { username: 'ben' })).body, { role: 'deploy', username: 'ben', changed: true });
      assert.deepEqual((await call('POST', '/roles/deploy/grants', { group: 'ops' })).body, { role: 'deploy', group: 'ops', changed: true });
      assert.deepEqual((await call('DELETE', '/roles/deploy/grants?username=ben')).body, { role: 'deploy', username: 'ben', changed: true });
      const list = (await call('GET', '/roles')).body.roles as Record<string, unknown>[];
      assert.deepEqual(list.map((x) => ({ ...x, id: undefined })), [{ id: undefined, name: 'deploy', approvers: 'ops', approvals: 2, max_minutes: 45, users: [], groups: ['ops'] }]);
    });

    it('bad input: 400 invalid_request, unknown names 404, taken names 409, no token 401; never a 5xx', async () => {
      for (const [method, path, body, status, code] of [
        ['POST', '/groups', { name: 'has space' }, 400, 'invalid_request'],
        ['POST', '/groups', { name: 42 }, 400, 'invalid_request'],
        ['POST', '/groups', [], 400, 'invalid_request'],
        ['POST', '/groups', { name: 'OPS' }, 409, 'conflict'],
        ['POST', '/groups/nope/members', { username: 'ana' }, 404, 'not_found'],
        ['POST', '/groups/ops/members', { username: 'zed' }, 404, 'not_found'],
        ['POST', '/roles', { name: 'x', approvals: 3 }, 400, 'invalid_request'],
        ['POST', '/roles', { name: 'x', approvers: 'ops', approvals: 1.5 }, 400, 'invalid_request'],
        ['POST', '/roles', { name: 'x', approvers: 'ops', max_minutes: 100000 }, 400, 'invalid_request'],
        ['POST', '/roles/deploy/grants', { username: 'ana', group: 'ops' }, 400, 'invalid_request'],
        ['POST', '/roles/deploy/grants', {}, 400, 'invalid_request'],
        ['POST', '/roles/none/grants', { username: 'ana' }, 404, 'not_found'],
      ] as const) {
        const r = await call(method, path, body);
        assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.error, code);
      }
      const anon = await call('GET', '/groups', undefined, 'wrong');
      assert.equal(anon.status, 401);
    });
  });
}
