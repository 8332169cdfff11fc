import type { Update } from '@grammyjs/types';
import type { MessageEntity } from '@grammyjs/types';
import { GroupCommits } from './group-commit.js';
import type { BotRecord, BotStorage, BotStores, ChatRecord, NewMessage, Person, StoredMessage } from './ports.js';

/** A person's message waiting for the next group commit. */
export interface PersonWrite {
  bot: BotRecord;
  person: Person;
  userId: string;
  text: string;
  entities: MessageEntity[] | null;
  date: number;
  now: number;
  /** Builds the bot's update for the stored message; absent: the bot gets none (BotFather, allowed_updates). */
  update?: (stored: StoredMessage) => (updateId: number) => Update;
}

export interface PersonWritten {
  stored: StoredMessage;
  chat: ChatRecord;
  update?: Update;
}

/**
 * Group commit for people's messages (GroupCommits: each caller answered once
 * its own message has committed; a failed group retried message by message).
 * Each message needs the chat row (its message counter) and the bot row (its
 * update counter) inside one transaction, and the bot row is the same for
 * everyone writing to that bot: on PostgreSQL its lock is held until the
 * commit has reached the disk, so one transaction per message would serialise
 * every person behind one fsync each. A group is one transaction, one
 * update-id allocation per bot. Locks are taken in one order (chats by bot and
 * chat, then bots by id), so two groups in two processes cannot deadlock.
 */
export class PersonWriteGroups extends GroupCommits<PersonWrite, PersonWritten> {
  constructor(storage: BotStorage) {
    super((writes) => storage.transaction((tx) => writeGroup(tx, writes)));
  }
}

const byChat = (a: PersonWrite, b: PersonWrite) => a.bot.id - b.bot.id || a.person.id - b.person.id;

/** The group's writes in lock order; results in the callers' order. */
async function writeGroup(tx: BotStores, writes: PersonWrite[]): Promise<PersonWritten[]> {
  const order = writes.map((w, i) => ({ w, i })).sort((x, y) => byChat(x.w, y.w));
  const out: PersonWritten[] = new Array(writes.length);
  // A chat's messages in the group, in arrival order (the sort is stable).
  const perChat = new Map<string, { w: PersonWrite; i: number }[]>();
  for (const o of order) {
    const key = `${o.w.bot.id}:${o.w.person.id}`;
    const list = perChat.get(key);
    if (list) list.push(o);
    else perChat.set(key, [o]);
  }
  for (const list of perChat.values()) {
    const { w: first } = list[0]!;
    const chat = await tx.chats.open(first.bot.id, first.person.id, first.userId, first.now);
    const message = (w: PersonWrite) => ({
      botId: w.bot.id, chatId: w.person.id, fromBot: false, date: w.date, text: w.text, entities: w.entities, replyToMessageId: null,
    });
    // Several messages of one chat: one counter bump and one insert (on PostgreSQL one statement) instead of one each.
    const stored = list.length === 1
      ? [await tx.chats.addMessage(message(first), first.now)]
      : (await tx.chats.addMessages(first.bot.id, first.person.id, list.map(({ w }) => message(w)), Math.max(...list.map(({ w }) => w.now))))?.messages;
    if (!stored) throw new Error('chat or person missing right after the chat was opened');
    list.forEach(({ i }, k) => (out[i] = { stored: stored[k]!, chat }));
  }
  // Bot rows last, in id order: one counter update per bot for all its updates in the group.
  const perBot = new Map<number, { w: PersonWrite; i: number }[]>();
  for (const o of order) if (o.w.update) perBot.set(o.w.bot.id, [...(perBot.get(o.w.bot.id) ?? []), o]);
  for (const [botId, list] of perBot) {
    const updates = await tx.updates.addMany(botId, list.map(({ w, i }) => ({ chatId: w.person.id, build: w.update!(out[i]!.stored) })), list[0]!.w.now);
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
 * write into a chat; group-commit.ts): the messages that arrive while a group
 * commits go into the next one. A chat's messages in a group take their
 * message_ids from one counter bump and are stored by one insert, which also
 * reads the chat's person (ChatStore.addMessages), so sendMessage reads
 * nothing before it writes; a group of several chats is one transaction,
 * chats in one order (bot, chat) as PersonWriteGroups takes them, so the two
 * cannot deadlock. Each caller is answered once its own message committed.
 */
export function botWriteGroups(storage: BotStorage): GroupCommits<BotWrite, BotWritten> {
  return new GroupCommits(async (writes) => {
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
  });
}
