import { createHash, randomBytes } from 'node:crypto';
import type { CallbackQuery, Update } from '@grammyjs/types';
import type { Clock } from '../ports.js';
import { wantsUpdate } from './conversations.js';
import { badRequest } from './errors.js';
import { GroupCommit } from '../group-commit.js';
import { botGroupOptions } from './group-writes.js';
import { messageObject, personUser } from './objects.js';
import type { BotRecord, BotStorage, BotStores, CallbackAnswer, CallbackAnswerWrite, Person, StoredMessage } from './ports.js';
import { Waiter, topics, type Wakeups } from './wakeups.js';

/**
 * How long a press waits for the bot's answer, and how long the bot may
 * answer: past it the person's client has stopped waiting (docs/architecture.md,
 * callback queries), so a late answer is refused as Telegram refuses it.
 */
export const CALLBACK_ANSWER_MS = 15_000;

export const QUERY_TOO_OLD = 'query is too old and response timeout expired or query ID is invalid';

/** Longer answers (a long start link) are not carried on the wake-up. */
const MAX_PUBLISHED_ANSWER = 1024;

/** A query id is a decimal 63-bit number, as Telegram's are (a string in the Bot API). */
const newQueryId = () => (randomBytes(8).readBigUInt64BE() >> 1n).toString();

/**
 * chat_instance: the same for every press in one chat, and telling nothing
 * about the ids it is made from (a signed 64-bit decimal, as Telegram's).
 */
export const chatInstance = (botId: number, chatId: number) =>
  createHash('sha256').update(`chat_instance:${botId}:${chatId}`).digest().readBigInt64BE().toString();

export interface CallbackDeps {
  storage: BotStorage;
  wakeups: Wakeups;
  clock: Clock;
}

/** A press waiting for the next group commit: its query row, and the bot's update unless the bot hears none. */
interface PressWrite {
  id: string;
  bot: BotRecord;
  person: Person;
  m: StoredMessage;
  data: string;
  now: number;
  update: boolean;
}

/**
 * The answer as published on the query's topic (after it committed), so the
 * waiting press need not read it back; anything else (an empty message, a
 * wake-up while the relay is degraded) sends the press to storage.
 */
function publishedAnswer(message: string): CallbackAnswer | undefined {
  if (!message.startsWith('{')) return undefined;
  try {
    const a = JSON.parse(message) as unknown;
    return a !== null && typeof a === 'object' && !Array.isArray(a) ? (a as CallbackAnswer) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Inline button presses: a press becomes a `callback_query` update and waits
 * for the bot's answerCallbackQuery, which it returns to the person.
 */
export class CallbackQueries {
  /**
   * Presses are group-committed as people's messages are (group-writes.ts):
   * each press's update takes an id from its bot's row, whose lock PostgreSQL
   * holds until the commit reached the disk, so one transaction per press
   * would serialise every press to a bot behind one commit each.
   */
  private readonly groups: GroupCommit<PressWrite, Update | undefined>;
  /** Answers likewise: the answers that arrive while one group commits share the next statement. */
  private readonly answers: GroupCommit<CallbackAnswerWrite, boolean>;

  constructor(private readonly deps: CallbackDeps) {
    this.groups = new GroupCommit((writes) => deps.storage.transaction((tx) => writePresses(tx, writes)), botGroupOptions((writes, updates) => {
      // One wake-up per bot per group, carrying its newest update id.
      const newest = new Map<number, number>();
      writes.forEach((w, i) => {
        const u = updates[i];
        if (u) newest.set(w.bot.id, Math.max(newest.get(w.bot.id) ?? 0, u.update_id));
      });
      for (const [botId, updateId] of newest) deps.wakeups.publish(topics.updates(botId), String(updateId));
    }));
    this.answers = new GroupCommit((writes) => deps.storage.callbacks.answer(writes), botGroupOptions((writes, recorded) => writes.forEach((w, i) => {
      if (!recorded[i]) return;
      // The answer rides on the wake-up unless it is long (a PostgreSQL NOTIFY payload is bounded): the press then reads it.
      const message = JSON.stringify(w.answer);
      deps.wakeups.publish(topics.callback(w.id), message.length <= MAX_PUBLISHED_ANSWER ? message : '');
    })));
  }

  /**
   * Within the cache_time of the last answer to the button carrying `data` on
   * message `messageId`, that answer: the press gets it again and the bot no
   * new update (Bot API answerCallbackQuery).
   */
  async cached(bot: BotRecord, person: Person, messageId: number, data: string): Promise<CallbackAnswer | undefined> {
    const last = await this.deps.storage.callbacks.lastAnswered(bot.id, person.id, messageId, data);
    const until = last?.answer?.cache_time && last.answeredAt !== null ? last.answeredAt + last.answer.cache_time * 1000 : 0;
    return this.deps.clock.now() < until ? last!.answer! : undefined;
  }

  /**
   * The person pressed the button carrying `data` on message `m` (checked by
   * the caller, and `cached` found no answer to repeat). Resolves with the
   * bot's answer, or undefined after CALLBACK_ANSWER_MS (or when `signal`
   * aborts) without one.
   */
  async press(bot: BotRecord, person: Person, m: StoredMessage, data: string, signal: AbortSignal): Promise<CallbackAnswer | undefined> {
    const { storage, wakeups, clock } = this.deps;
    const id = newQueryId();
    let published: CallbackAnswer | undefined;
    const waiter = new Waiter(wakeups, [topics.callback(id)], (_topic, message) => {
      published ??= publishedAnswer(message);
      return true;
    });
    try {
      await waiter.ready();
      const update = bot.tokenHash !== null && wantsUpdate(bot, 'callback_query');
      await this.groups.submit({ id, bot, person, m, data, now: clock.now(), update });
      // Subscribed before the query existed: its answer, committed and published later, wakes the waiter.
      const deadline = Date.now() + CALLBACK_ANSWER_MS;
      for (;;) {
        if (!(await waiter.wait(deadline - Date.now(), signal))) return undefined;
        if (published) return published;
        const q = await storage.callbacks.get(bot.id, id);
        if (q?.answer) return q.answer;
      }
    } finally {
      waiter.close();
    }
  }

  /** answerCallbackQuery: once per query, while the person still waits. */
  async answer(bot: BotRecord, id: string, answer: CallbackAnswer): Promise<void> {
    const now = this.deps.clock.now();
    if (!/^\d{1,20}$/.test(id) || !(await this.answers.submit({ botId: bot.id, id, answer, now, notBefore: now - CALLBACK_ANSWER_MS }))) {
      throw badRequest(QUERY_TOO_OLD);
    }
  }
}

/**
 * One group's presses: every query row in one insert, then each bot's
 * updates from one id allocation, bots in id order (the only rows locked
 * here, so two groups in two processes cannot deadlock). Results in the
 * callers' order.
 */
async function writePresses(tx: BotStores, writes: PressWrite[]): Promise<(Update | undefined)[]> {
  await tx.callbacks.add(writes.map((w) => ({ id: w.id, botId: w.bot.id, chatId: w.person.id, messageId: w.m.messageId, data: w.data, createdAt: w.now })));
  const out: (Update | undefined)[] = new Array(writes.length).fill(undefined);
  const perBot = new Map<number, number[]>();
  writes.forEach((w, i) => {
    if (w.update) perBot.set(w.bot.id, [...(perBot.get(w.bot.id) ?? []), i]);
  });
  for (const botId of [...perBot.keys()].sort((a, b) => a - b)) {
    const list = perBot.get(botId)!;
    const updates = await tx.updates.addMany(botId, list.map((i) => {
      const { id, bot, person, m, data } = writes[i]!;
      const query: CallbackQuery = { id, from: personUser(person), message: messageObject(m, bot, person), chat_instance: chatInstance(bot.id, person.id), data };
      return { chatId: person.id, build: (update_id: number) => ({ update_id, callback_query: query } as Update) };
    }), writes[list[0]!]!.now);
    list.forEach((i, k) => (out[i] = updates[k]));
  }
  return out;
}
