import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBot } from '../../src/core/bot/manage.js';
import { createEndpoint } from '../../src/core/notify/endpoints.js';
import { newEvent } from '../../src/core/notify/events.js';
import { DeliveryWorker } from '../../src/core/notify/worker.js';
import { systemClock } from '../../src/core/ports.js';
import { notifyTransport } from '../../src/core/notify/transport.js';
import { createOutbound } from '../../src/infra/outbound/client.js';
import { openStorage, type SqlStorage } from '../../src/store/index.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { aUser } from '../store/fixtures.js';
import { Receiver } from './support.js';

const created = (name: string) => newEvent('client.created', { client_id: name, client_name: name, grant_types: [], redirect_uris: [], token_endpoint_auth_method: 'none' }, Date.now());

/**
 * Every group of stores (OAuth, chat bot, third-party login) commits through
 * the one transaction port, so an event written in any of their transactions
 * wakes the worker at commit instead of waiting for its next sweep.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`the worker wakes at the commit of any store's transaction (${kind})`, { skip }, () => {
    let url: string;
    let storage: SqlStorage;
    before(async () => {
      url = freshDatabaseUrl(kind);
      storage = await openStorage(url);
    });
    after(async () => {
      await storage.close();
      await dropDatabase(url);
    });

    it('after a chat-bot or third-party-login transaction commits, once per commit, never before it or after a rollback', async () => {
      let wakes = 0;
      const off = storage.events.onAppended(() => wakes++);
      try {
        await storage.bot.transaction(async (tx) => {
          await tx.events.append(created('bot-1'));
          assert.equal(wakes, 0, 'not before the commit');
        });
        assert.equal(wakes, 1, 'chat-bot transaction');
        await storage.federation.transaction(async (tx) => {
          await tx.events.append(created('fed-1'));
          await tx.events.append(created('fed-2'));
        });
        assert.equal(wakes, 2, 'third-party-login transaction, once for two events');
        await assert.rejects(storage.bot.transaction(async (tx) => {
          await tx.events.append(created('bot-2'));
          throw new Error('rolled back');
        }), /rolled back/);
        await assert.rejects(storage.federation.transaction(async (tx) => {
          await tx.events.append(created('fed-3'));
          throw new Error('rolled back');
        }), /rolled back/);
        assert.equal(wakes, 2, 'no wake-up for what rolled back');
        await storage.transaction(async (tx) => {
          await tx.events.append(created('core-1'));
        });
        assert.equal(wakes, 3, 'OAuth store transaction');
      } finally {
        off();
      }
    });

    it('delivers bot.created well within the sweep interval', async () => {
      const receiver = await new Receiver().start();
      const outbound = createOutbound({ allowPrivate: true });
      const ep = await createEndpoint(storage.events, systemClock, { url: `${receiver.url}/bots`, events: ['bot.created'] }, { checkUrl: outbound.check });
      receiver.secretFor('/bots', ep.secret);
      // A sweep far away: only the commit's wake-up can deliver in time.
      const worker = new DeliveryWorker({
        events: storage.events, clock: systemClock, webhooks: notifyTransport(outbound.request), chats: notifyTransport(outbound.request), chat: undefined,
      }, { sweepMs: 60_000, timeoutMs: 2000 });
      worker.start();
      try {
        // Let the start-up sweep finish so the next claim comes from the wake-up.
        await new Promise((r) => setTimeout(r, 200));
        const owner = aUser();
        await storage.users.create(owner);
        const latencies: number[] = [];
        for (let i = 0; i < 5; i++) {
          const t0 = performance.now();
          const { bot } = await createBot(storage.bot, systemClock, { ownerUserId: owner.id, username: `wake${i}_${kind}_bot`, name: 'Wake' });
          assert.ok(await receiver.until(() => [...receiver.unique.values()].some((r) => r.data.bot_id === bot.id), 2000), 'delivered');
          latencies.push(performance.now() - t0);
        }
        latencies.sort((x, y) => x - y);
        assert.ok(latencies[2]! < 300, `median commit → delivery ${latencies[2]!.toFixed(0)} ms, well below the 60 s sweep (${latencies.map((l) => l.toFixed(0)).join(', ')} ms)`);
        assert.deepEqual(receiver.invalid, []);
      } finally {
        await worker.stop();
        outbound.close();
        await receiver.close();
        await storage.events.endpoints.delete(ep.id);
      }
    });
  });
}
