import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import type { Update } from '@grammyjs/types';
import { BotUsernameTakenError, type BotStorage, type NewBot, type NewMessage } from '../../../src/core/bot/ports.js';
import type { UserStore } from '../../../src/core/ports.js';
import { hashOf, T } from '../fixtures.js';
import type { StoreFactory, SuiteOptions } from './suite.js';

const aBot = (over: Partial<NewBot> = {}): NewBot => ({
  id: randomInt(1_000_000, 2 ** 40), username: `b${randomUUID().slice(0, 8)}_bot`, name: 'Test', ownerUserId: randomUUID(),
  tokenHash: hashOf('bot-token'), createdAt: T, ...over,
});

const aMessage = (botId: number, chatId: number, over: Partial<NewMessage> = {}): NewMessage => ({
  botId, chatId, fromBot: false, date: T / 1000, text: 'hello', entities: null, replyToMessageId: null, ...over,
});

/** An update as getUpdates shows it; the store keeps it as given. */
const textUpdate = (chatId: number, text: string) => (updateId: number): Update => ({
  update_id: updateId,
  message: { message_id: 1, date: T / 1000, chat: { id: chatId, type: 'private', first_name: 'Ada' }, text },
} as Update);

/**
 * The chat-bot stores (BotStorage): bots with unique usernames, private chats
 * whose message ids and bots' update ids are allocated atomically, and the
 * update queue getUpdates and webhooks read.
 */
export function botStoresConformance(name: string, factory: StoreFactory<BotStorage & { users: UserStore }>, { skip }: SuiteOptions = {}): void {
  describe(`storage conformance: bot chats and updates (${name})`, { skip }, () => {
    let storage: BotStorage & { users: UserStore };
    let close: () => Promise<void>;
    before(async () => {
      ({ stores: storage, close } = await factory());
    });
    after(() => close());

    describe('BotStore', () => {
      it('finds a bot by id, token hash and username whatever the case; refuses a taken username', async () => {
        const bot = aBot({ username: 'Weather_bot' });
        await storage.bots.create(bot);
        assert.equal((await storage.bots.get(bot.id))?.username, 'Weather_bot');
        assert.equal((await storage.bots.findByTokenHash(bot.tokenHash!))?.id, bot.id);
        assert.equal((await storage.bots.findByUsername('weather_BOT'))?.id, bot.id);
        assert.deepEqual((await storage.bots.listByOwner(bot.ownerUserId!)).map((b) => b.id), [bot.id]);
        await assert.rejects(storage.bots.create(aBot({ username: 'WEATHER_bot' })), BotUsernameTakenError);
        assert.equal(await storage.bots.get(1), undefined);
      });

      it('deleting a bot deletes its chats, messages and updates', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        await storage.chats.open(bot.id, 7, 'someone', T);
        await storage.chats.addMessage(aMessage(bot.id, 7), T);
        await storage.updates.add(bot.id, 7, textUpdate(7, 'hi'), T);
        await storage.bots.delete(bot.id);
        assert.equal(await storage.bots.get(bot.id), undefined);
        assert.equal(await storage.chats.get(bot.id, 7), undefined);
        assert.equal(await storage.chats.getMessage(bot.id, 7, 1), undefined);
        assert.equal(await storage.updates.count(bot.id), 0);
      });
    });

    describe('ChatStore', () => {
      it('opens a private chat once, and numbers its messages 1, 2, 3… even when sent together', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        const first = await storage.chats.open(bot.id, 42, 'user-42', T);
        const again = await storage.chats.open(bot.id, 42, 'user-42', T + 5);
        assert.deepEqual(again, first);
        const sent = await Promise.all(Array.from({ length: 10 }, (_, i) => storage.chats.addMessage(aMessage(bot.id, 42, { text: `m${i}`, fromBot: i % 2 === 0 }), T + i)));
        assert.deepEqual(sent.map((m) => m.messageId).sort((a, b) => a - b), Array.from({ length: 10 }, (_, i) => i + 1));
        const after3 = await storage.chats.messagesAfter(bot.id, 42, 3, 100);
        assert.deepEqual(after3.map((m) => m.messageId), [4, 5, 6, 7, 8, 9, 10]);
        assert.equal((await storage.chats.messagesAfter(bot.id, 42, 0, 2)).length, 2);
        assert.equal((await storage.chats.lastMessage(bot.id, 42))?.messageId, 10);
        assert.equal((await storage.chats.get(bot.id, 42))?.lastMessageId, 10);
      });

      it('stores several messages into one chat with one allocation: consecutive ids after the earlier ones, fields kept, the person with them; nothing for a missing chat or person', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        const userId = randomUUID();
        const username = `p${userId.slice(0, 8)}`;
        await storage.users.create({ id: userId, username, email: `${username}@example.test`, name: 'Ada L', passwordHash: '!', createdAt: T });
        const personId = await storage.people.ensure(userId, randomInt(1_000_000, 2 ** 40));
        await storage.chats.open(bot.id, personId, userId, T);
        await storage.chats.addMessage(aMessage(bot.id, personId, { text: 'first' }), T);
        const markup = { inline_keyboard: [[{ text: 'Yes', callback_data: 'y' }]] };
        const many = await storage.chats.addMessages(bot.id, personId, [
          aMessage(bot.id, personId, { fromBot: true, text: 'a', entities: [{ type: 'bold', offset: 0, length: 1 }] }),
          aMessage(bot.id, personId, { fromBot: true, text: 'b', replyToMessageId: 1, replyMarkup: markup, content: { has_protected_content: true } }),
          aMessage(bot.id, personId, { fromBot: true, text: "c 'quoted' \"json\" ✓" }),
        ], T + 9);
        assert.ok(many);
        assert.deepEqual(many.person, { userId, id: personId, username, name: 'Ada L' });
        assert.deepEqual(await storage.chats.withPerson(bot.id, personId), { person: many.person, chat: await storage.chats.get(bot.id, personId) });
        assert.deepEqual((await storage.chats.withPerson(bot.id, `@${username.toUpperCase()}`))?.person, many.person);
        assert.deepEqual(many.messages.map((m) => m.messageId), [2, 3, 4]);
        const stored = await storage.chats.messagesAfter(bot.id, personId, 1, 10);
        assert.deepEqual(stored, many.messages);
        assert.equal(stored[0]!.fromBot, true);
        assert.deepEqual(stored[0]!.entities, [{ type: 'bold', offset: 0, length: 1 }]);
        assert.equal(stored[1]!.replyToMessageId, 1);
        assert.deepEqual(stored[1]!.replyMarkup, markup);
        assert.deepEqual(stored[1]!.content, { has_protected_content: true });
        assert.equal(stored[2]!.text, "c 'quoted' \"json\" ✓");
        const chat = await storage.chats.get(bot.id, personId);
        assert.equal(chat?.lastMessageId, 4);
        assert.equal(chat?.updatedAt, T + 9);
        assert.deepEqual(many.chat, chat);
        // No chat with this person; a chat whose person has no account row.
        assert.equal(await storage.chats.addMessages(bot.id, personId + 1, [aMessage(bot.id, personId + 1)], T), undefined);
        assert.equal(await storage.chats.withPerson(bot.id, personId + 1), undefined);
        await storage.chats.open(bot.id, 44, 'nobody', T);
        assert.equal(await storage.chats.addMessages(bot.id, 44, [aMessage(bot.id, 44)], T), undefined);
        assert.equal(await storage.chats.getMessage(bot.id, 44, 1), undefined);
        assert.equal((await storage.chats.get(bot.id, 44))?.lastMessageId, 0);
      });

      it('stores people\'s messages with the bot\'s updates in one go where it can: ids consecutive, payloads as built; nothing for a renamed person or a missing chat', async () => {
        const addPersonMessages = storage.chats.addPersonMessages?.bind(storage.chats);
        if (!addPersonMessages) {
          // SQLite has no such statement: its writes are in-process, and the group's transaction does them (group-writes.ts).
          assert.match(name, /sqlite/i, 'only SQLite goes without it');
          return;
        }
        const bot = aBot();
        await storage.bots.create(bot);
        const person = async (name: string | null, chat = true) => {
          const userId = randomUUID();
          const username = `p${userId.slice(0, 8)}`;
          await storage.users.create({ id: userId, username, email: `${username}@example.test`, name, passwordHash: '!', createdAt: T });
          const id = await storage.people.ensure(userId, randomInt(1_000_000, 2 ** 40));
          if (chat) await storage.chats.open(bot.id, id, userId, T);
          return { userId, id, username, name };
        };
        const [ada, bob] = [await person('Ada L'), await person(null)];
        const build = (p: typeof ada) => (m: { messageId: number; text: string; date: number }) => (update_id: number) =>
          ({ update_id, message: { message_id: m.messageId, from: { id: p.id, is_bot: false, first_name: p.username }, chat: { id: p.id, type: 'private' }, date: m.date, text: m.text } }) as Update;
        const one = (p: typeof ada, text: string) => ({ message: aMessage(bot.id, p.id, { text }), update: build(p) });
        const got = await addPersonMessages(bot.id, [
          { person: ada, messages: [one(ada, 'a1'), one(ada, 'a2 "quoted" ✓')] },
          { person: bob, messages: [one(bob, 'b1')] },
        ], T + 3);
        assert.ok(got);
        assert.deepEqual(got.map((c) => c.messages.map((m) => m.messageId)), [[1, 2], [1]]);
        assert.deepEqual(got.map((c) => c.chat.lastMessageId), [2, 1]);
        const ids = got.flatMap((c) => c.updates.map((u) => u.update_id));
        ids.forEach((id, i) => i > 0 && assert.equal(id, ids[i - 1]! + 1));
        const listed = await storage.updates.list(bot.id, undefined, 10);
        assert.deepEqual(listed.map((u) => u.update), got.flatMap((c) => c.updates));
        assert.deepEqual(listed.map((u) => u.update.message?.text), ['a1', 'a2 "quoted" ✓', 'b1']);
        assert.deepEqual(listed.map((u) => u.chatId), [ada.id, ada.id, bob.id]);
        assert.deepEqual(await storage.chats.messagesAfter(bot.id, ada.id, 0, 10), got[0]!.messages);
        // A person not as expected (renamed), or a chat missing: nothing stored.
        assert.equal(await addPersonMessages(bot.id, [{ person: { ...ada, name: 'Ada King' }, messages: [one(ada, 'x')] }], T), undefined);
        const carol = { userId: randomUUID(), id: bob.id + 1, username: 'carol', name: null };
        assert.equal(await addPersonMessages(bot.id, [{ person: ada, messages: [one(ada, 'y')] }, { person: carol, messages: [one(carol, 'z')] }], T), undefined);
        const dave = await person('Dave', false);
        assert.equal(await addPersonMessages(bot.id, [{ person: ada, messages: [one(ada, 'y')] }, { person: dave, messages: [one(dave, 'z')] }], T), undefined);
        assert.equal(await storage.updates.count(bot.id), 3);
        assert.equal((await storage.chats.messagesAfter(bot.id, ada.id, 0, 10)).length, 2);
        assert.equal((await storage.chats.get(bot.id, ada.id))?.lastMessageId, 2, 'no message_id taken either');
      });

      it('edits and deletes a message once; keeps its text, entities and reply', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        await storage.chats.open(bot.id, 5, 'user-5', T);
        const m = await storage.chats.addMessage(aMessage(bot.id, 5, { text: 'bold', entities: [{ type: 'bold', offset: 0, length: 4 }] }), T);
        const reply = await storage.chats.addMessage(aMessage(bot.id, 5, { fromBot: true, text: 'ok', replyToMessageId: m.messageId }), T);
        const stored = await storage.chats.getMessage(bot.id, 5, m.messageId);
        assert.equal(stored?.text, 'bold');
        assert.deepEqual(stored?.entities, [{ type: 'bold', offset: 0, length: 4 }]);
        assert.equal((await storage.chats.getMessage(bot.id, 5, reply.messageId))?.replyToMessageId, m.messageId);

        assert.equal(await storage.chats.editMessage(bot.id, 5, m.messageId, { text: 'plain', entities: null, editDate: T / 1000 + 1 }), true);
        const edited = await storage.chats.getMessage(bot.id, 5, m.messageId);
        assert.equal(edited?.text, 'plain');
        assert.equal(edited?.entities, null);
        assert.equal(edited?.editDate, T / 1000 + 1);
        assert.equal(await storage.chats.editMessage(bot.id, 5, 999, { text: 'x', entities: null, editDate: null }), false);

        assert.equal(await storage.chats.deleteMessage(bot.id, 5, m.messageId), true);
        assert.equal(await storage.chats.getMessage(bot.id, 5, m.messageId), undefined);
        assert.equal(await storage.chats.deleteMessage(bot.id, 5, m.messageId), false);
      });

      it("lists a person's chats, most recently active first, and keeps a conversation state", async () => {
        const [a, b] = [aBot(), aBot()];
        await storage.bots.create(a);
        await storage.bots.create(b);
        const user = `user-${randomUUID()}`;
        await storage.chats.open(a.id, 9, user, T);
        await storage.chats.open(b.id, 9, user, T + 1);
        await storage.chats.addMessage(aMessage(a.id, 9), T + 2);
        assert.deepEqual((await storage.chats.listForUser(user)).map((c) => c.botId), [a.id, b.id]);
        await storage.chats.setState(a.id, 9, '{"step":"newbot_name"}');
        assert.equal((await storage.chats.get(a.id, 9))?.state, '{"step":"newbot_name"}');
        await storage.chats.setState(a.id, 9, null);
        assert.equal((await storage.chats.get(a.id, 9))?.state, null);
      });
    });

    describe('UpdateStore', () => {
      it('numbers updates one after another, even when added together, and lists them oldest first', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        const added = await Promise.all(Array.from({ length: 10 }, (_, i) => storage.updates.add(bot.id, 3, textUpdate(3, `u${i}`), T + i)));
        const ids = added.map((u) => u.update_id).sort((a, b) => a - b);
        assert.deepEqual(ids, Array.from({ length: 10 }, (_, i) => ids[0]! + i));
        const listed = await storage.updates.list(bot.id, undefined, 100);
        assert.deepEqual(listed.map((u) => u.updateId), ids);
        assert.deepEqual(listed.map((u) => u.update.update_id), ids);
        assert.deepEqual((await storage.updates.list(bot.id, ids[7], 100)).map((u) => u.updateId), ids.slice(7));
        assert.equal((await storage.updates.list(bot.id, undefined, 3)).length, 3);
        assert.equal(await storage.updates.count(bot.id), 10);
      });

      it('confirms below an id, keeps the newest, deletes one or all, purges by age', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        // Older than every other test's updates: the purge is for all bots at once.
        const at = T - 1_000;
        const ids: number[] = [];
        for (let i = 0; i < 8; i++) ids.push((await storage.updates.add(bot.id, null, textUpdate(1, `u${i}`), at + i)).update_id);
        assert.equal(await storage.updates.deleteBelow(bot.id, ids[2]!), 2);
        await storage.updates.keepLast(bot.id, 4);
        assert.deepEqual((await storage.updates.list(bot.id, undefined, 100)).map((u) => u.updateId), ids.slice(4));
        await storage.updates.delete(bot.id, ids[5]!);
        assert.deepEqual((await storage.updates.list(bot.id, undefined, 100)).map((u) => u.updateId), [ids[4], ids[6], ids[7]]);
        await storage.updates.markAttempt(bot.id, ids[4]!, 2, T + 60_000);
        const [retried] = await storage.updates.list(bot.id, ids[4], 1);
        assert.equal(retried?.attempts, 2);
        assert.equal(retried?.nextAttemptAt, T + 60_000);
        assert.equal(await storage.updates.purgeOlderThan(at + 7), 2);
        assert.deepEqual((await storage.updates.list(bot.id, undefined, 100)).map((u) => u.updateId), [ids[7]]);
        await storage.updates.deleteAll(bot.id);
        assert.equal(await storage.updates.count(bot.id), 0);
      });

      it('adds several updates with one allocation, stored as built; confirms and lists in one call', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        const texts = ['plain', "it's \"quoted\" ✓ \\ \u2028", 'third'];
        const added = await storage.transaction((tx) => tx.updates.addMany(bot.id, texts.map((t, i) => ({ chatId: i === 1 ? null : 7, build: textUpdate(7, t) })), T));
        const ids = added.map((u) => u.update_id);
        assert.deepEqual(ids, [ids[0]!, ids[0]! + 1, ids[0]! + 2]);
        assert.deepEqual(added.map((u) => u.message?.text), texts);
        const listed = await storage.updates.list(bot.id, undefined, 10);
        assert.deepEqual(listed.map((u) => u.update), added);
        assert.deepEqual(listed.map((u) => u.chatId), [7, null, 7]);
        assert.deepEqual((await storage.updates.confirmAndList(bot.id, ids[1]!, 10)).map((u) => u.update), added.slice(1));
        assert.equal(await storage.updates.count(bot.id), 2);
        assert.deepEqual((await storage.updates.confirmAndList(bot.id, ids[2]! + 1, 10)), []);
        assert.equal(await storage.updates.count(bot.id), 0);
        const more = await storage.transaction((tx) => tx.updates.addMany(bot.id, [{ chatId: 7, build: textUpdate(7, 'after') }], T));
        assert.equal(more[0]!.update_id, ids[2]! + 1);
        await assert.rejects(storage.transaction((tx) => tx.updates.addMany(bot.id + 1, [{ chatId: 7, build: textUpdate(7, 'no bot') }], T)));
      });

      it('polls as a bot: its row read with the confirmation; nothing confirmed for a changed token or a webhook', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        const hash = bot.tokenHash!;
        const added = await storage.transaction((tx) => tx.updates.addMany(bot.id, ['a', 'b', 'c'].map((t) => ({ chatId: 7, build: textUpdate(7, t) })), T));
        const ids = added.map((u) => u.update_id);
        const polled = await storage.updates.pollAs(bot.id, hash, ids[1]!, 10);
        assert.deepEqual(polled, { webhookSet: false, allowedUpdates: null, updates: await storage.updates.list(bot.id, ids[1]!, 10) });
        assert.deepEqual(polled!.updates.map((u) => u.update), added.slice(1));
        assert.equal(await storage.updates.count(bot.id), 2, 'the update below the offset is confirmed');
        assert.deepEqual((await storage.updates.pollAs(bot.id, hash, ids[1]!, 1))!.updates.map((u) => u.updateId), [ids[1]], 'limit');
        // Another token, or no such bot: nothing read, nothing confirmed.
        assert.equal(await storage.updates.pollAs(bot.id, hashOf('another'), ids[2]!, 10), undefined);
        assert.equal(await storage.updates.pollAs(bot.id + 1, hash, ids[2]!, 10), undefined);
        assert.equal(await storage.updates.count(bot.id), 2);
        await storage.bots.setAllowedUpdates(bot.id, ['message', 'callback_query']);
        assert.deepEqual((await storage.updates.pollAs(bot.id, hash, ids[2]! + 5, 10))?.allowedUpdates, ['message', 'callback_query']);
        // Past the last update: everything confirmed, nothing listed.
        assert.equal(await storage.updates.count(bot.id), 0);
        const more = await storage.transaction((tx) => tx.updates.add(bot.id, 7, textUpdate(7, 'd'), T));
        await storage.bots.setWebhook(bot.id, { url: 'https://example.test/hook', secretToken: null, maxConnections: 40, allowedUpdates: null, setAt: T });
        assert.deepEqual(await storage.updates.pollAs(bot.id, hash, more.update_id + 1, 10), { webhookSet: true, allowedUpdates: ['message', 'callback_query'], updates: [] });
        assert.equal(await storage.updates.count(bot.id), 1, 'a webhook is set: nothing confirmed');
        await storage.bots.setTokenHash(bot.id, null);
        assert.equal(await storage.updates.pollAs(bot.id, hash, more.update_id + 1, 10), undefined);
      });

      it('an update added in a rolled-back transaction leaves nothing behind', async () => {
        const bot = aBot();
        await storage.bots.create(bot);
        await assert.rejects(storage.transaction(async (tx) => {
          await tx.updates.add(bot.id, 1, textUpdate(1, 'lost'), T);
          throw new Error('the change fails');
        }));
        assert.equal(await storage.updates.count(bot.id), 0);
        const kept = await storage.transaction((tx) => tx.updates.add(bot.id, 1, textUpdate(1, 'kept'), T));
        assert.deepEqual((await storage.updates.list(bot.id, undefined, 10)).map((u) => u.updateId), [kept.update_id]);
      });
    });
  });
}
