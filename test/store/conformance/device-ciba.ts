import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { BackchannelRequest, BackchannelStore, DecisionTransactions } from '../../../src/core/oauth/device-ports.js';
import { recordEvent } from '../../../src/core/notify/record.js';
import type { EventStore } from '../../../src/core/notify/ports.js';
import { T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

const aRequest = (over: Partial<BackchannelRequest> = {}): BackchannelRequest => ({
  id: randomUUID(), kind: 'device', secretHash: randomUUID(), userCodeHash: randomUUID(), clientId: 'client-a', scope: ['user'],
  userId: null, status: 'pending', decidedAt: null, bindingMessage: null, notificationToken: null,
  intervalSeconds: 5, lastPollAt: null, createdAt: T, expiresAt: T + 600_000, consumedAt: null, ...over,
});

/** BackchannelStore (device authorization and CIBA): polls, decisions and single use, atomic under concurrency. */
export function backchannelConformance(
  name: string, factory: StoreFactory<{ currentOAuth: { backchannel: BackchannelStore; decisions: DecisionTransactions }; events: Pick<EventStore, 'list'> }>, { skip }: SuiteOptions = {},
): void {
  describe(`storage conformance: device and CIBA requests (${name})`, { skip }, () => {
    let store: BackchannelStore;
    let decisions: DecisionTransactions;
    let events: Pick<EventStore, 'list'>;
    let close: () => Promise<void>;
    before(async () => {
      const opened = await factory();
      store = opened.stores.currentOAuth.backchannel;
      decisions = opened.stores.currentOAuth.decisions;
      events = opened.stores.events;
      close = opened.close;
    });
    after(() => close());

    it('create refuses a live user code twice; found by user code while unexpired', async () => {
      const r = aRequest();
      assert.equal(await store.create(r), true);
      assert.equal(await store.create(aRequest({ userCodeHash: r.userCodeHash })), false);
      assert.equal((await store.byUserCode(r.userCodeHash!, T))?.id, r.id);
      assert.equal(await store.byUserCode(r.userCodeHash!, r.expiresAt), undefined);
    });

    it('poll: pending in time, slow_down too soon (interval + 5), unknown for another client or kind, expired after', async () => {
      const r = aRequest();
      await store.create(r);
      assert.deepEqual(await store.poll('device', r.secretHash, r.clientId, T), { kind: 'pending' });
      assert.deepEqual(await store.poll('device', r.secretHash, r.clientId, T + 4_999), { kind: 'slow_down' });
      assert.equal((await store.get(r.id))?.intervalSeconds, 10);
      assert.deepEqual(await store.poll('device', r.secretHash, r.clientId, T + 4_999 + 10_000), { kind: 'pending' });
      assert.deepEqual(await store.poll('device', r.secretHash, 'client-b', T + 60_000), { kind: 'unknown' });
      assert.deepEqual(await store.poll('ciba', r.secretHash, r.clientId, T + 60_000), { kind: 'unknown' });
      assert.deepEqual(await store.poll('device', r.secretHash, r.clientId, r.expiresAt), { kind: 'expired' });
    });

    it('claim and decide: one person, one decision, and only while pending and unexpired', async () => {
      const r = aRequest();
      await store.create(r);
      assert.equal(await store.claim(r.id, 'alice', T), true);
      assert.equal(await store.claim(r.id, 'bob', T), false);
      assert.equal(await store.decide(r.id, 'bob', 'approved', T), false);
      const decisions = await Promise.all(Array.from({ length: 10 }, (_, i) => store.decide(r.id, 'alice', i % 2 ? 'approved' : 'denied', T)));
      assert.equal(decisions.filter(Boolean).length, 1);
      const late = aRequest();
      await store.create(late);
      assert.equal(await store.decide(late.id, 'alice', 'approved', late.expiresAt), false);
    });

    it('of 20 concurrent polls of an approved request exactly one gets it; then used', async () => {
      const r = aRequest({ kind: 'ciba', userCodeHash: null, userId: 'alice' });
      await store.create(r);
      assert.equal(await store.decide(r.id, 'alice', 'approved', T), true);
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.poll('ciba', r.secretHash, r.clientId, T + 1000)));
      assert.equal(outcomes.filter((o) => o.kind === 'approved').length, 1, JSON.stringify(outcomes.map((o) => o.kind)));
      assert.deepEqual(await store.poll('ciba', r.secretHash, r.clientId, T + 60_000), { kind: 'used' });
    });

    // DeviceFlow.decide and Ciba.decide (issue 24): the decision and its event commit or roll back together.
    it('decisions: a decision and its event in one transaction; a rollback leaves the request pending and unrecorded', async () => {
      const r = aRequest({ kind: 'ciba', userCodeHash: null, userId: `u-${randomUUID()}` });
      await store.create(r);
      const data = { user_id: r.userId!, client_id: r.clientId, client_name: 'App', scope: r.scope, binding_message: null };
      await assert.rejects(decisions.transaction(async (tx) => {
        assert.equal(await tx.backchannel.decide(r.id, r.userId!, 'approved', T), true);
        await recordEvent(tx, 'ciba.approved', data, T);
        throw new Error('rolled back');
      }), /rolled back/);
      assert.equal((await store.get(r.id))?.status, 'pending');
      const mine = async () => (await events.list({ type: 'ciba.approved', limit: 1000 })).filter((e) => e.userId === r.userId);
      assert.deepEqual(await mine(), []);
      const decided = await decisions.transaction(async (tx) => {
        if (!(await tx.backchannel.decide(r.id, r.userId!, 'approved', T))) return false;
        await recordEvent(tx, 'ciba.approved', data, T);
        return true;
      });
      assert.equal(decided, true);
      assert.equal((await store.get(r.id))?.status, 'approved');
      assert.deepEqual((await mine()).map((e) => e.data), [data]);
      assert.equal(await decisions.transaction((tx) => tx.backchannel.decide(r.id, r.userId!, 'denied', T)), false, 'decided once');
    });

    it('denied answers denied; purge drops expired requests', async () => {
      const r = aRequest();
      await store.create(r);
      await store.claim(r.id, 'alice', T);
      await store.decide(r.id, 'alice', 'denied', T);
      assert.deepEqual(await store.poll('device', r.secretHash, r.clientId, T), { kind: 'denied' });
      assert.ok((await store.purge(T + 700_000)) >= 1);
      assert.equal(await store.get(r.id), undefined);
    });
  });
}
