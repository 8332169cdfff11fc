import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import type { Update } from '@grammyjs/types';
import { BotWebhookDeliverer, type BotWebhookReply } from '../../src/core/bot/bot-webhooks.js';
import type { StoredUpdate, UpdateStore } from '../../src/core/bot/ports.js';
import { LocalWakeups, topics } from '../../src/core/bot/wakeups.js';
import type { SqlStorage } from '../../src/store/index.js';
import { databaseKinds } from '../helpers/db.js';
import { freshStorage, hashOf } from '../store/fixtures.js';

const text = (chatId: number, t: string) => (updateId: number): Update => ({
  update_id: updateId,
  message: { message_id: updateId, date: 1, chat: { id: chatId, type: 'private', first_name: 'Ada' }, text: t },
} as Update);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The bot webhook deliverer (src/core/bot/bot-webhooks.ts) against real
 * stores. Its pump reads a bot's pending updates while earlier sends may be
 * ending: a list read just before a send's delete committed still shows that
 * update, and must not send it again (seen as a duplicate under the full
 * suite in test/bot/redis-wakeups.test.ts). The store here answers each list
 * 60 ms after reading it, so every list is stale by the time it is used.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`bot webhook deliverer: stale lists (${kind})`, { skip }, () => {
    let storage: SqlStorage;
    let close: () => Promise<void>;
    before(async () => {
      ({ storage, close } = await freshStorage(kind));
    });
    after(() => close());

    const slowLists = (updates: UpdateStore): UpdateStore => Object.assign(Object.create(updates) as UpdateStore, {
      list: async (botId: number, fromId: number | undefined, limit: number): Promise<StoredUpdate[]> => {
        const rows = await updates.list(botId, fromId, limit);
        await sleep(60);
        return rows;
      },
    });

    async function run(reply: (text: string, n: number) => number, ms: number) {
      const bots = storage.bot.bots;
      const id = randomInt(1_000_000, 2 ** 40);
      await bots.create({ id, username: `d${id}_bot`, name: 'D', ownerUserId: null, tokenHash: hashOf(`d${id}`), createdAt: Date.now() });
      await bots.setWebhook(id, { url: 'https://hooks.example/d', secretToken: null, maxConnections: 40, allowedUpdates: null, setAt: Date.now() });
      const wakeups = new LocalWakeups();
      const sent: string[] = [];
      const post = async (_url: string, body: string): Promise<BotWebhookReply> => {
        const t = (JSON.parse(body) as { message: { text: string } }).message.text;
        sent.push(t);
        await sleep(20);
        return { status: reply(t, sent.filter((s) => s === t).length), headers: {}, body: '' };
      };
      const deliverer = new BotWebhookDeliverer({ bots, updates: slowLists(storage.bot.updates), wakeups, clock: { now: () => Date.now() }, callAs: async () => undefined },
        post, { baseMs: 400, maxMs: 400 });
      await deliverer.start();
      // Each new update wakes the pump again while the previous send is in flight.
      for (const t of ['u1', 'u2', 'u3', 'u4']) {
        await storage.bot.updates.add(id, 7, text(7, t), Date.now());
        wakeups.publish(topics.updates(id));
        await sleep(15);
      }
      await sleep(ms);
      deliverer.stop();
      return { sent, left: await storage.bot.updates.list(id, undefined, 100) };
    }

    it('sends each update of a chat once, in order, although every list is stale when used', async () => {
      const { sent, left } = await run(() => 200, 700);
      assert.deepEqual(sent, ['u1', 'u2', 'u3', 'u4']);
      assert.equal(left.length, 0);
    });

    it('retries a refused update only after its backoff, and its chat waits for it', async () => {
      // u2 is refused once: its retry comes 400 ms later, not at the next (stale) pump, and u3 never overtakes it.
      const { sent, left } = await run((t, n) => (t === 'u2' && n === 1 ? 500 : 200), 1200);
      assert.deepEqual(sent, ['u1', 'u2', 'u2', 'u3', 'u4']);
      assert.equal(left.length, 0);
    });
  });
}
