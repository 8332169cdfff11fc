import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEndpoint, personalChatInput } from '../../../src/core/notify/endpoints.js';
import { newEvent } from '../../../src/core/notify/events.js';
import { recordEvent } from '../../../src/core/notify/record.js';
import type { Clock } from '../../../src/core/ports.js';
import { createOutbound } from '../../../src/infra/outbound/client.js';
import type { SqlStorage } from '../../../src/store/index.js';
import { aClient, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

const clock: Clock = { now: () => T };
const checkUrl = createOutbound({ allowPrivate: false }).check;
const hook = (events: string[] | string) => ({ url: 'https://hooks.example.test/h', events: typeof events === 'string' ? [events] : events });
const created = (name = 'App') => newEvent('client.created', { client_id: name, client_name: name, grant_types: [], redirect_uris: [], token_endpoint_auth_method: 'none' }, T);

/**
 * The outbox (EventStore): events commit with the change that caused them,
 * deliveries are queued per subscribed endpoint, leased to one claimer at a
 * time across processes, and purged once finished. Two storages on one
 * database stand for two processes' worth of connections.
 */
export function notifyOutboxConformance(name: string, factory: StoreFactory<{ one: SqlStorage; other: SqlStorage }>, { skip }: SuiteOptions = {}): void {
  describe(`outbox storage (${name})`, { skip }, () => {
    let a: SqlStorage;
    let b: SqlStorage;
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: { one: a, other: b }, close } = await factory());
    });
    after(() => close());

    it('commits the event and its deliveries with the change, or neither', async () => {
      const ep = await createEndpoint(a.events, clock, hook('client.created'), { checkUrl });
      const kept = aClient();
      const e1 = newEvent('client.created', { client_id: kept.id, client_name: kept.name, grant_types: [], redirect_uris: [], token_endpoint_auth_method: 'none' }, T);
      await a.transaction(async (tx) => {
        await tx.clients.create(kept);
        await tx.events.append(e1);
      });
      const lost = aClient();
      const e2 = newEvent('client.created', { client_id: lost.id, client_name: lost.name, grant_types: [], redirect_uris: [], token_endpoint_auth_method: 'none' }, T);
      await assert.rejects(a.transaction(async (tx) => {
        await tx.clients.create(lost);
        await tx.events.append(e2);
        throw new Error('the change fails');
      }));
      assert.ok(await a.events.get(e1.id));
      assert.equal((await a.events.deliveries.get(ep.id, e1.id))?.status, 'pending');
      assert.equal(await a.events.get(e2.id), undefined);
      assert.equal(await a.events.deliveries.get(ep.id, e2.id), undefined);
      assert.equal(await a.clients.get(lost.id), undefined);
      await a.events.endpoints.delete(ep.id);
    });

    it('queues only for enabled endpoints subscribed to the type, and a personal chat only for its person', async () => {
      const logins = await createEndpoint(a.events, clock, hook('user.login.succeeded'), { checkUrl });
      const other = await createEndpoint(a.events, clock, hook('consent.granted'), { checkUrl });
      const mine = await createEndpoint(a.events, clock, personalChatInput('42'), { checkUrl, userId: 'alice-id' });
      const off = await createEndpoint(a.events, clock, hook('*'), { checkUrl });
      await a.events.endpoints.update(off.id, { disabledAt: T }, T);
      const alice = newEvent('user.login.succeeded', { user_id: 'alice-id', username: 'alice', ip: '192.0.2.1' }, T);
      const bob = newEvent('user.login.succeeded', { user_id: 'bob-id', username: 'bob', ip: '192.0.2.2' }, T);
      await a.events.append(alice);
      await a.events.append(bob);
      assert.ok(await a.events.deliveries.get(logins.id, alice.id));
      assert.ok(await a.events.deliveries.get(logins.id, bob.id));
      assert.ok(await a.events.deliveries.get(mine.id, alice.id));
      assert.equal(await a.events.deliveries.get(mine.id, bob.id), undefined);
      assert.equal(await a.events.deliveries.get(other.id, alice.id), undefined);
      assert.equal(await a.events.deliveries.get(off.id, alice.id), undefined);
      for (const e of [logins, other, mine, off]) await a.events.endpoints.delete(e.id);
    });

    it('leases each due delivery to one claimer at a time, across connections, until the lease expires', async () => {
      const ep = await createEndpoint(a.events, clock, hook('client.created'), { checkUrl });
      for (let i = 0; i < 40; i++) await a.events.append(created(`c${i}`));
      const [x, y] = await Promise.all([a.events.deliveries.claim(T, 25, 10_000, 'x'), b.events.deliveries.claim(T, 25, 10_000, 'y')]);
      const ids = [...x, ...y].map((c) => c.event.id);
      assert.equal(ids.length, 40, 'everything claimed once');
      assert.equal(new Set(ids).size, 40, 'no delivery claimed twice');
      assert.deepEqual(await a.events.deliveries.claim(T + 9_999, 100, 10_000, 'z'), [], 'leased');
      const again = await b.events.deliveries.claim(T + 10_000, 100, 10_000, 'z');
      assert.equal(again.length, 40, 'a crashed claimer\'s lease runs out and the work is claimed again');
      assert.equal(again[0]!.endpoint.id, ep.id);
      await a.events.endpoints.delete(ep.id);
    });

    it('skips recording a gated event type nobody subscribes to, and sees a new subscription at once', async () => {
      const stores = { events: a.events };
      // Let the cache load what is there (no endpoint subscribes to token.issued).
      a.events.subscribed('token.issued');
      for (let i = 0; i < 50 && a.events.subscribed('token.issued'); i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(a.events.subscribed('token.issued'), false);
      const data = { client_id: 'c', user_id: null, scope: [], token_format: 'jwt' as const, jti: 'j', family_id: null, expires_at: new Date(T).toISOString() };
      await recordEvent(stores, 'token.issued', data, T);
      assert.equal((await a.events.list({ type: 'token.issued', limit: 10 })).length, 0);
      const ep = await createEndpoint(a.events, clock, hook('token.issued'), { checkUrl });
      assert.equal(a.events.subscribed('token.issued'), true);
      await recordEvent(stores, 'token.issued', data, T);
      assert.equal((await a.events.list({ type: 'token.issued', limit: 10 })).length, 1);
      await a.events.endpoints.delete(ep.id);
    });

    it('purges old finished deliveries, their attempts and events, never what is pending', async () => {
      const ep = await createEndpoint(a.events, clock, hook('client.created'), { checkUrl });
      const done = created('done');
      const waiting = created('waiting');
      await a.events.append(done);
      await a.events.append(waiting);
      const [claimed] = (await a.events.deliveries.claim(T, 100, 1000, 'w')).filter((c) => c.event.id === done.id);
      await a.events.deliveries.complete({
        attempt: { endpointId: ep.id, eventId: claimed!.event.id, attempt: 1, startedAt: T, durationMs: 1, statusCode: 200, error: null, response: 'ok', ok: true },
        next: { status: 'delivered' }, endpointOk: true,
      }, T);
      await a.events.purge(T + 1);
      assert.equal(await a.events.get(done.id), undefined);
      assert.ok(await a.events.get(waiting.id));
      assert.equal((await a.events.deliveries.get(ep.id, waiting.id))?.status, 'pending');
      await a.events.endpoints.delete(ep.id);
    });
  });
}
