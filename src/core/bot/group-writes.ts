import type { Update } from '@grammyjs/types';
import type { MessageEntity } from '@grammyjs/types';
import { forbidden } from './errors.js';
import { GroupCommit, type GroupCommitOptions } from '../group-commit.js';
import type { BotRecord, BotStorage, BotStores, ChatRecord, NewMessage, Person, StoredMessage } from './ports.js';

/**
 * The chat's queues (people's and bots' messages, button presses and their
 * answers): one group in flight, of at most MAX_GROUP writes; a failed group
 * is retried write by write, a lone one too, so one write's error is its own
 * and a deadlock or a dropped connection gets a second chance; `committed`
 * wakes the readers once per group.
 */
export function botGroupOptions<W, R>(committed?: (writes: W[], results: R[]) => void): GroupCommitOptions<W, R> {
  return { maxInFlight: 1, onFailure: 'retry-each', retryAlone: true, ...(committed ? { committed } : {}) };
}

/** A person's message waiting for the next group commit. */
export interface PersonWrite {
  bot: BotRecord;
  /** The person's chat id (Person.id); their names are read by the write itself. */
  personId: number;
  userId: string;
  text: string;
  entities: MessageEntity[] | null;
  date: number;
  now: number;
  /** Builds the bot's update for the stored message; absent: the bot gets none (BotFather, allowed_updates). */
  update?: (stored: StoredMessage, person: Person) => (updateId: number) => Update;
}

export interface PersonWritten {
  stored: StoredMessage;
  chat: ChatRecord;
  /** As the write read them, in the same transaction. */
  person: Person;
  update?: Update;
}

/**
 * Group commit for people's messages (botGroupOptions: each caller answered
 * once its own message has committed; a failed group retried message by message).
 * Each message needs the chat row (its message counter) and the bot row (its
 * update counter) inside one transaction, and the bot row is the same for
 * everyone writing to that bot: on PostgreSQL its lock is held until the
 * commit has reached the disk, so one transaction per message would serialise
 * every person behind one fsync each. A group is one transaction, one
 * update-id allocation per bot. Locks are taken in one order (chats by bot and
 * chat, then bots by id), so two groups in two processes cannot deadlock.
 */
export class PersonWriteGroups extends GroupCommit<PersonWrite, PersonWritten> {
  constructor(storage: BotStorage) {
    const people = new Map<number, Person>();
    super(async (writes) => {
      const out = (await oneStatement(storage, writes, people)) ?? (await storage.transaction((tx) => writeGroup(tx, writes)));
      if (people.size + out.length > PEOPLE_MAX) people.clear();
      for (const o of out) people.set(o.person.id, o.person);
      return out;
    }, botGroupOptions());
  }
}

/** People whose names a group remembers (PersonWriteGroups), at most. */
const PEOPLE_MAX = 10_000;

/**
 * A group of messages to one bot from people whose names are known (as the
 * last group stored them), in one statement where the store has one
 * (ChatStore.addPersonMessages: no transaction around it, one round trip
 * instead of one per chat, then the bot row's, then the commit's).
 * Undefined when it does not apply or the store finds things otherwise (a
 * first message, a renamed person): writeGroup then does it all again.
 */
async function oneStatement(storage: BotStorage, writes: PersonWrite[], people: Map<number, Person>): Promise<PersonWritten[] | undefined> {
  if (!storage.chats.addPersonMessages) return undefined;
  const bot = writes[0]!.bot;
  const perChat = new Map<number, { person: Person; list: { w: PersonWrite; i: number }[] }>();
  for (const [i, w] of writes.entries()) {
    if (w.bot.id !== bot.id) return undefined;
    const chat = perChat.get(w.personId);
    if (chat) {
      chat.list.push({ w, i });
      continue;
    }
    const person = people.get(w.personId);
    if (!person || person.userId !== w.userId) return undefined;
    perChat.set(w.personId, { person, list: [{ w, i }] });
  }
  const chats = [...perChat.values()].sort((a, b) => a.person.id - b.person.id);
  const now = Math.max(...writes.map((w) => w.now));
  const done = await storage.chats.addPersonMessages(bot.id, chats.map(({ person, list }) => ({
    person,
    messages: list.map(({ w }) => ({
      message: { botId: bot.id, chatId: w.personId, fromBot: false, date: w.date, text: w.text, entities: w.entities, replyToMessageId: null },
      ...(w.update ? { update: (stored: StoredMessage) => w.update!(stored, person) } : {}),
    })),
  })), now);
  if (!done) return undefined;
  const out: PersonWritten[] = new Array(writes.length);
  chats.forEach(({ person, list }, c) => {
    const { chat, messages, updates } = done[c]!;
    list.forEach(({ i }, k) => (out[i] = { stored: messages[k]!, chat, person, ...(updates[k] ? { update: updates[k] } : {}) }));
  });
  return out;
}

const byChat = (a: PersonWrite, b: PersonWrite) => a.bot.id - b.bot.id || a.personId - b.personId;

/** The group's writes in lock order; results in the callers' order. */
async function writeGroup(tx: BotStores, writes: PersonWrite[]): Promise<PersonWritten[]> {
  const order = writes.map((w, i) => ({ w, i })).sort((x, y) => byChat(x.w, y.w));
  const out: PersonWritten[] = new Array(writes.length);
  // A chat's messages in the group, in arrival order (the sort is stable).
  const perChat = new Map<string, { w: PersonWrite; i: number }[]>();
  for (const o of order) {
    const key = `${o.w.bot.id}:${o.w.personId}`;
    const list = perChat.get(key);
    if (list) list.push(o);
    else perChat.set(key, [o]);
  }
  for (const list of perChat.values()) {
    const { w: first } = list[0]!;
    const messages = list.map(({ w }) => ({
      botId: w.bot.id, chatId: w.personId, fromBot: false, date: w.date, text: w.text, entities: w.entities, replyToMessageId: null,
    }));
    const now = Math.max(...list.map(({ w }) => w.now));
    // The chat exists but for a person's first message: one statement (on PostgreSQL) stores the messages and reads the
    // chat and the person; only when it finds no chat is the chat opened, and the messages stored again.
    let stored = await tx.chats.addMessages(first.bot.id, first.personId, messages, now);
    if (!stored) {
      await tx.chats.open(first.bot.id, first.personId, first.userId, first.now);
      stored = await tx.chats.addMessages(first.bot.id, first.personId, messages, now);
    }
    // The person's account is gone (deleted since their id was looked up): nothing of the group is stored.
    if (!stored) throw forbidden('user not found');
    const { chat, person } = stored;
    list.forEach(({ i }, k) => (out[i] = { stored: stored.messages[k]!, chat, person }));
  }
  // Bot rows last, in id order: one counter update per bot for all its updates in the group.
  const perBot = new Map<number, { w: PersonWrite; i: number }[]>();
  for (const o of order) {
    if (!o.w.update) continue;
    const list = perBot.get(o.w.bot.id);
    if (list) list.push(o);
    else perBot.set(o.w.bot.id, [o]);
  }
  for (const [botId, list] of perBot) {
    const updates = await tx.updates.addMany(botId, list.map(({ w, i }) => ({ chatId: w.personId, build: w.update!(out[i]!.stored, out[i]!.person) })), list[0]!.w.now);
    list.forEach(({ i }, k) => (out[i]!.update = updates[k]));
  }
  return out;
}

/** A bot's message waiting for the next group commit. */
export interface BotWrite {
  message: NewMessage;
  now: number;
}

/** The message as stored, with the chat's person; undefined when the chat or its person is missing (nothing stored). */
export type BotWritten = { person: Person; message: StoredMessage } | undefined;

/**
 * Group commit for bots' messages (sendMessage and the other methods that
 * write into a chat; src/core/group-commit.ts): the messages that arrive while a group
 * commits go into the next one. A chat's messages in a group take their
 * message_ids from one counter bump and are stored by one insert, which also
 * reads the chat's person (ChatStore.addMessages), so sendMessage reads
 * nothing before it writes; a group of several chats is one transaction,
 * chats in one order (bot, chat) as PersonWriteGroups takes them, so the two
 * cannot deadlock. Each caller is answered once its own message committed.
 */
export function botWriteGroups(storage: BotStorage): GroupCommit<BotWrite, BotWritten> {
  return new GroupCommit(async (writes) => {
    const chats = new Map<string, BotWrite[]>();
    for (const w of writes) {
      const key = `${w.message.botId}:${w.message.chatId}`;
      const list = chats.get(key);
      if (list) list.push(w);
      else chats.set(key, [w]);
    }
    const lists = [...chats.values()].sort((a, b) => a[0]!.message.botId - b[0]!.message.botId || a[0]!.message.chatId - b[0]!.message.chatId);
    const write = async (tx: Pick<BotStores, 'chats'>) => {
      const out = new Map<BotWrite, BotWritten>();
      for (const list of lists) {
        const { botId, chatId } = list[0]!.message;
        const stored = await tx.chats.addMessages(botId, chatId, list.map((w) => w.message), Math.max(...list.map((w) => w.now)));
        list.forEach((w, k) => out.set(w, stored && { person: stored.person, message: stored.messages[k]! }));
      }
      return out;
    };
    // One chat: its one write is atomic by itself, no transaction around it.
    const stored = lists.length === 1 ? await write(storage) : await storage.transaction(write);
    return writes.map((w) => stored.get(w));
  }, botGroupOptions());
}
