import { createHash, randomBytes } from 'node:crypto';
import type { CallbackQuery, Update } from '@grammyjs/types';
import type { Clock } from '../ports.js';
import { wantsUpdate } from './conversations.js';
import { badRequest } from './errors.js';
import { messageObject, personUser } from './objects.js';
import type { BotRecord, BotStorage, CallbackAnswer, Person, StoredMessage } from './ports.js';
import { Waiter, topics, type Wakeups } from './wakeups.js';

/**
 * How long a press waits for the bot's answer, and how long the bot may
 * answer: past it the person's client has stopped waiting (docs/architecture.md,
 * callback queries), so a late answer is refused as Telegram refuses it.
 */
export const CALLBACK_ANSWER_MS = 15_000;

export const QUERY_TOO_OLD = 'query is too old and response timeout expired or query ID is invalid';

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

/**
 * Inline button presses: a press becomes a `callback_query` update and waits
 * for the bot's answerCallbackQuery, which it returns to the person.
 */
export class CallbackQueries {
  constructor(private readonly deps: CallbackDeps) {}

  /**
   * The person pressed the button carrying `data` on message `m` (checked by
   * the caller). Resolves with the bot's answer, or undefined after
   * CALLBACK_ANSWER_MS (or when `signal` aborts) without one.
   */
  async press(bot: BotRecord, person: Person, m: StoredMessage, data: string, signal: AbortSignal): Promise<CallbackAnswer | undefined> {
    const { storage, wakeups, clock } = this.deps;
    // Within the cache_time of the last answer to this button, that answer again and no new update (Bot API answerCallbackQuery).
    const last = await storage.callbacks.lastAnswered(bot.id, person.id, m.messageId, data);
    if (last?.answer?.cache_time && last.answeredAt !== null && clock.now() < last.answeredAt + last.answer.cache_time * 1000) return last.answer;
    const id = newQueryId();
    const waiter = new Waiter(wakeups, [topics.callback(id)]);
    try {
      await waiter.ready();
      const now = clock.now();
      const update = await storage.transaction(async (tx) => {
        await tx.callbacks.add({ id, botId: bot.id, chatId: person.id, messageId: m.messageId, data, createdAt: now });
        if (bot.tokenHash === null || !wantsUpdate(bot, 'callback_query')) return undefined;
        const query: CallbackQuery = {
          id, from: personUser(person), message: messageObject(m, bot, person), chat_instance: chatInstance(bot.id, person.id), data,
        };
        return tx.updates.add(bot.id, person.id, (update_id) => ({ update_id, callback_query: query } as Update), now);
      });
      if (update) wakeups.publish(topics.updates(bot.id), String(update.update_id));
      const deadline = Date.now() + CALLBACK_ANSWER_MS;
      for (;;) {
        const q = await storage.callbacks.get(bot.id, id);
        if (q?.answer) return q.answer;
        if (!(await waiter.wait(deadline - Date.now(), signal))) return undefined;
      }
    } finally {
      waiter.close();
    }
  }

  /** answerCallbackQuery: once per query, while the person still waits. */
  async answer(bot: BotRecord, id: string, answer: CallbackAnswer): Promise<void> {
    const now = this.deps.clock.now();
    if (!/^\d{1,20}$/.test(id) || !(await this.deps.storage.callbacks.answer(bot.id, id, answer, now, now - CALLBACK_ANSWER_MS))) {
      throw badRequest(QUERY_TOO_OLD);
    }
    this.deps.wakeups.publish(topics.callback(id), '');
  }
}
