import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AccessStore, AccessTransactions, Elevation } from '../../../src/core/access/ports.js';
import type { UserStore } from '../../../src/core/ports.js';
import { MINUTE, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

type Stores = { access: AccessStore; accessTransactions: AccessTransactions; users: UserStore };

const anElevation = (over: Partial<Elevation> = {}): Elevation => ({
  id: randomUUID(), userId: 'u-asker', roleId: 'r-x', minutes: 30, reason: 'deploy', state: 'waiting', approvals: 0, required: 2,
  createdAt: T, expiresAt: T + 15 * MINUTE, decidedAt: null, until: null, ...over,
});

/** AccessStore (issue 28): groups, roles, who holds them, and elevations counted once per approver. */
export function accessConformance(name: string, factory: StoreFactory<Stores>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: groups, roles and elevations (${name})`, { skip }, () => {
    let s: Stores;
    let close: () => Promise<void>;
    const user = async (username: string) => {
      const id = randomUUID();
      await s.users.create({ id, username, email: `${username}@example.test`, name: null, passwordHash: '!', createdAt: T });
      return id;
    };
    before(async () => {
      ({ stores: s, close } = await factory());
    });
    after(() => close());

    it('groups: unique names in any case, members once, listed with usernames', async () => {
      const ada = await user('ada');
      const bo = await user('bo');
      assert.equal(await s.access.createGroup({ id: 'g1', name: 'Ops', createdAt: T }), true);
      assert.equal(await s.access.createGroup({ id: 'g2', name: 'ops', createdAt: T }), false, 'the name is taken in another case');
      assert.equal((await s.access.groupByName('OPS'))?.id, 'g1');
      assert.equal((await s.access.groupById('g1'))?.name, 'Ops');
      assert.equal(await s.access.groupByName('nope'), undefined);
      assert.equal(await s.access.addMember('g1', ada, T), true);
      assert.equal(await s.access.addMember('g1', ada, T), false, 'a member once');
      assert.equal(await s.access.addMember('g1', bo, T + 1), true);
      assert.deepEqual((await s.access.listGroups()).map((g) => [g.name, g.members.map((m) => m.username)]), [['Ops', ['ada', 'bo']]]);
      assert.equal(await s.access.isMember('g1', bo), true);
      assert.deepEqual(await s.access.members('g1'), [ada, bo]);
      assert.equal(await s.access.removeMember('g1', bo), true);
      assert.equal(await s.access.removeMember('g1', bo), false);
      assert.equal(await s.access.isMember('g1', bo), false);
      assert.deepEqual(await s.access.groupsOf(ada), ['Ops']);
      assert.deepEqual(await s.access.groupsOf(bo), []);
    });

    it('roles: directly, through groups, and through elevations until they end', async () => {
      const cy = await user('cy');
      await s.access.createGroup({ id: 'g-dev', name: 'dev', createdAt: T });
      await s.access.addMember('g-dev', cy, T);
      for (const [id, n] of [['r-a', 'admin'], ['r-d', 'deployer'], ['r-o', 'oncall']] as const) {
        assert.equal(await s.access.createRole({ id, name: n, approversGroupId: null, approvals: 1, maxMinutes: null, createdAt: T }), true);
      }
      assert.equal(await s.access.createRole({ id: 'r-dup', name: 'ADMIN', approversGroupId: null, approvals: 1, maxMinutes: null, createdAt: T }), false);
      assert.equal(await s.access.grant('r-a', { kind: 'user', id: cy }, T), true);
      assert.equal(await s.access.grant('r-a', { kind: 'user', id: cy }, T), false);
      assert.equal(await s.access.grant('r-d', { kind: 'group', id: 'g-dev' }, T), true);
      assert.deepEqual(await s.access.rolesOf(cy, T), ['admin', 'deployer']);
      // An elevation granted until T + 30 min.
      await s.access.createElevation(anElevation({ id: 'e-1', userId: cy, roleId: 'r-o', state: 'granted', decidedAt: T, until: T + 30 * MINUTE, required: 1, approvals: 1 }));
      assert.deepEqual(await s.access.rolesOf(cy, T + 29 * MINUTE), ['admin', 'deployer', 'oncall']);
      assert.deepEqual(await s.access.rolesOf(cy, T + 30 * MINUTE), ['admin', 'deployer'], 'an ended elevation counts no more, swept or not');
      const listed = (await s.access.listRoles()).find((r) => r.name === 'deployer')!;
      assert.deepEqual(listed.groups, ['dev']);
      assert.deepEqual((await s.access.listRoles()).find((r) => r.name === 'admin')!.users.map((u) => u.username), ['cy']);
      assert.equal(await s.access.revoke('r-d', { kind: 'group', id: 'g-dev' }), true);
      assert.equal(await s.access.revoke('r-d', { kind: 'group', id: 'g-dev' }), false);
      assert.equal(await s.access.removeMember('g-dev', cy), true);
      assert.deepEqual(await s.access.rolesOf(cy, T), ['admin', 'oncall']);
      assert.equal((await s.access.roleByName('Admin'))?.id, 'r-a');
      assert.equal((await s.access.roleById('r-o'))?.name, 'oncall');
    });

    it('elevations: never the asker\'s own approval, each approver once, granted at the required count', async () => {
      const e = anElevation({ userId: 'asker' });
      await s.access.createElevation(e);
      assert.deepEqual(await s.access.approve(e.id, 'asker', T), { kind: 'closed' }, 'the asker cannot approve');
      const one = await s.access.approve(e.id, 'p1', T + 1);
      assert.equal(one.kind, 'counted');
      assert.deepEqual(await s.access.approve(e.id, 'p1', T + 2), { kind: 'duplicate' });
      const two = await s.access.approve(e.id, 'p2', T + 3);
      assert.equal(two.kind, 'granted');
      assert.equal(two.kind === 'granted' && two.elevation.until, T + 3 + 30 * MINUTE);
      assert.deepEqual(await s.access.approve(e.id, 'p3', T + 4), { kind: 'closed' });
      assert.equal(await s.access.deny(e.id, 'p3', T + 4), false, 'decided already');
      const got = await s.access.elevation(e.id);
      assert.equal(got?.state, 'granted');
      assert.equal(got?.approvals, 2);
      assert.equal((await s.access.elevationsOf('asker', 5))[0]?.id, e.id);
    });

    it('concurrent approvals of different people count each once; exactly one grants', async () => {
      const e = anElevation({ userId: 'asker2', required: 3 });
      await s.access.createElevation(e);
      const presses = ['a', 'b', 'c', 'd', 'a', 'b'].map((p) => s.accessTransactions.transaction((tx) => tx.access.approve(e.id, p, T + 10)));
      const outcomes = (await Promise.all(presses)).map((o) => o.kind);
      assert.equal(outcomes.filter((k) => k === 'granted').length, 1, outcomes.join());
      assert.equal(outcomes.filter((k) => k === 'counted').length, 2, outcomes.join());
      const after = await s.access.elevation(e.id);
      assert.equal(after?.state, 'granted');
      assert.equal(after?.approvals, 3);
    });

    it('deny, lapse and end: one caller each; dueToExpire lists what expire acts on', async () => {
      const d = anElevation({ userId: 'x' });
      await s.access.createElevation(d);
      assert.equal(await s.access.deny(d.id, 'x', T), false, 'not the asker');
      const denies = await Promise.all([s.access.deny(d.id, 'p', T), s.access.deny(d.id, 'q', T)]);
      assert.deepEqual(denies.sort(), [false, true]);
      assert.equal((await s.access.elevation(d.id))?.state, 'denied');

      const lapse = anElevation({ userId: 'y', createdAt: T + 1 });
      const ends = anElevation({ userId: 'z', state: 'granted', until: T + 5 * MINUTE, decidedAt: T, createdAt: T + 2 });
      await s.access.createElevation(lapse);
      await s.access.createElevation(ends);
      const mine = (list: Elevation[]) => list.map((x) => x.id).filter((id) => id === lapse.id || id === ends.id);
      assert.deepEqual(mine(await s.access.dueToExpire(T + MINUTE, 100)), []);
      assert.equal(await s.access.expire(lapse.id, T + MINUTE), undefined, 'not yet');
      assert.deepEqual(mine(await s.access.dueToExpire(T + 20 * MINUTE, 100)), [lapse.id, ends.id]);
      assert.deepEqual((await Promise.all([s.access.expire(ends.id, T + 20 * MINUTE), s.access.expire(ends.id, T + 20 * MINUTE)])).sort(), ['granted', undefined]);
      assert.equal(await s.access.expire(lapse.id, T + 20 * MINUTE), 'waiting');
      assert.equal(await s.access.approve(lapse.id, 'p', T + 20 * MINUTE).then((o) => o.kind), 'closed');
      assert.deepEqual(mine(await s.access.dueToExpire(T + 20 * MINUTE, 100)), []);

      await s.access.addMessage(d.id, '42', 7);
      await s.access.addMessage(d.id, '42', 7);
      await s.access.addMessage(d.id, '43', 9);
      assert.deepEqual((await s.access.messages(d.id)).sort((a, b) => a.messageId - b.messageId), [{ chatId: '42', messageId: 7 }, { chatId: '43', messageId: 9 }]);
    });
  });
}
