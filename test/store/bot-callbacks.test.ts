import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import type { BotStorage, CallbackAnswerWrite } from '../../src/core/bot/ports.js';
import { hashOf, T } from './fixtures.js';
import { sqlAdapters } from './adapters.js';

/**
 * The callback query store on SQLite and PostgreSQL: presses inserted as a
 * group, answers recorded as a group (src/core/bot/callbacks.ts), each query
 * answered at most once whoever answers and however the answers are grouped,
 * and the cache_time lookup finding the newest answer of a button.
 */
for (const { name, open, skip } of await sqlAdapters()) {
  describe(`storage conformance: callback queries (${name})`, { skip }, () => {
    let storage: BotStorage;
    let close: () => Promise<void>;
    const botId = randomInt(1_000_000, 2 ** 40);
    before(async () => {
      const opened = await open();
      storage = opened.stores.bot;
      close = opened.close;
      await storage.bots.create({ id: botId, username: `cb${randomUUID().slice(0, 8)}_bot`, name: 'Buttons', ownerUserId: randomUUID(), tokenHash: hashOf('cb'), createdAt: T });
    });
    after(() => close());

    const press = (id: string, over: { chatId?: number; messageId?: number; data?: string; createdAt?: number } = {}) => ({
      id, botId, chatId: over.chatId ?? 7, messageId: over.messageId ?? 1, data: over.data ?? 'ok', createdAt: over.createdAt ?? T,
    });
    const answer = (id: string, text: string, over: Partial<CallbackAnswerWrite> = {}): CallbackAnswerWrite => ({
      botId, id, answer: { text }, now: T + 10, notBefore: T - 1000, ...over,
    });

    it('stores a group of presses in one call; each reads back unanswered', async () => {
      await storage.callbacks.add([press('101'), press('102', { chatId: 8 }), press('103', { data: 'no' })]);
      for (const id of ['101', '102', '103']) {
        const q = await storage.callbacks.get(botId, id);
        assert.equal(q?.id, id);
        assert.equal(q?.answer, null);
        assert.equal(q?.answeredAt, null);
      }
      assert.equal((await storage.callbacks.get(botId, '102'))?.chatId, 8);
      assert.equal(await storage.callbacks.get(botId + 1, '101'), undefined, 'another bot\'s id reads nothing');
      await storage.callbacks.add([]);
    });

    it('records a group of answers: each once, a repeated id only its first, an unknown, old or other bot\'s query not at all', async () => {
      await storage.callbacks.add([press('201'), press('202'), press('203', { createdAt: T - 5000 }), press('204')]);
      const recorded = await storage.callbacks.answer([
        answer('201', 'first'), answer('202', 'b'), answer('201', 'second'), answer('203', 'too old'), answer('299', 'unknown'),
        answer('204', 'wrong bot', { botId: botId + 1 }),
      ]);
      assert.deepEqual(recorded, [true, true, false, false, false, false]);
      assert.deepEqual((await storage.callbacks.get(botId, '201'))?.answer, { text: 'first' });
      assert.equal((await storage.callbacks.get(botId, '201'))?.answeredAt, T + 10);
      assert.equal((await storage.callbacks.get(botId, '203'))?.answer, null);
      assert.equal((await storage.callbacks.get(botId, '204'))?.answer, null);
      assert.deepEqual(await storage.callbacks.answer([answer('201', 'again')]), [false], 'answered already');
      assert.deepEqual((await storage.callbacks.get(botId, '201'))?.answer, { text: 'first' });
    });

    it('of 10 groups answering the same queries at once, each query is recorded exactly once', async () => {
      const ids = Array.from({ length: 20 }, (_, i) => String(300 + i));
      await storage.callbacks.add(ids.map((id) => press(id)));
      const groups = await Promise.all(Array.from({ length: 10 }, (_, g) => storage.callbacks.answer(ids.map((id) => answer(id, `g${g}`)))));
      for (const [k, id] of ids.entries()) {
        const winners = groups.filter((r) => r[k]).length;
        assert.equal(winners, 1, `query ${id} recorded once`);
        const text = (await storage.callbacks.get(botId, id))?.answer?.text;
        assert.equal(text, `g${groups.findIndex((r) => r[k])}`, 'the stored answer is the winner\'s');
      }
    });

    it('finds the newest answered press of a button, not another button\'s or an unanswered one', async () => {
      await storage.callbacks.add([press('401', { messageId: 9 }), press('402', { messageId: 9 }), press('403', { messageId: 9, data: 'other' }), press('404', { messageId: 9 })]);
      assert.equal(await storage.callbacks.lastAnswered(botId, 7, 9, 'ok'), undefined);
      await storage.callbacks.answer([answer('401', 'old', { now: T + 1 })]);
      await storage.callbacks.answer([answer('402', 'new', { now: T + 2 }), answer('403', 'other button', { now: T + 3 })]);
      const last = await storage.callbacks.lastAnswered(botId, 7, 9, 'ok');
      assert.equal(last?.id, '402');
      assert.deepEqual(last?.answer, { text: 'new' });
      assert.equal((await storage.callbacks.lastAnswered(botId, 7, 9, 'other'))?.id, '403');
      assert.equal(await storage.callbacks.lastAnswered(botId, 8, 9, 'ok'), undefined);
    });
  });
}
