import type { Kysely } from 'kysely';
import type { CallbackAnswer, CallbackQueryStore, StoredCallbackQuery } from '../../core/bot/ports.js';
import type { BotCallbackQueriesTable, DB } from '../schema.js';

const toQuery = (r: BotCallbackQueriesTable): StoredCallbackQuery => ({
  id: r.id, botId: Number(r.bot_id), chatId: Number(r.chat_id), messageId: r.message_id, data: r.data, createdAt: Number(r.created_at),
  answeredAt: r.answered_at === null ? null : Number(r.answered_at), answer: r.answer === null ? null : (JSON.parse(r.answer) as CallbackAnswer),
});

export class SqlCallbackQueryStore implements CallbackQueryStore {
  constructor(private readonly db: Kysely<DB>) {}

  async add(qs: readonly Omit<StoredCallbackQuery, 'answeredAt' | 'answer'>[]): Promise<void> {
    if (!qs.length) return;
    await this.db.insertInto('bot_callback_queries').values(qs.map((q) => ({
      id: q.id, bot_id: q.botId, chat_id: q.chatId, message_id: q.messageId, data: q.data, created_at: q.createdAt, answered_at: null, answer: null,
    }))).execute();
  }

  async get(botId: number, id: string): Promise<StoredCallbackQuery | undefined> {
    const r = await this.db.selectFrom('bot_callback_queries').selectAll().where('id', '=', id).where('bot_id', '=', botId).executeTakeFirst();
    return r && toQuery(r);
  }

  async lastAnswered(botId: number, chatId: number, messageId: number, data: string): Promise<StoredCallbackQuery | undefined> {
    const r = await this.db.selectFrom('bot_callback_queries').selectAll().where('bot_id', '=', botId).where('chat_id', '=', chatId)
      .where('message_id', '=', messageId).where('data', '=', data).where('answered_at', 'is not', null)
      .orderBy('answered_at', 'desc').limit(1).executeTakeFirst();
    return r && toQuery(r);
  }

  /** One conditional UPDATE: of two concurrent answers only one finds the row unanswered. */
  async answer(botId: number, id: string, answer: CallbackAnswer, now: number, notBefore: number): Promise<boolean> {
    const r = await this.db.updateTable('bot_callback_queries').set({ answered_at: now, answer: JSON.stringify(answer) })
      .where('id', '=', id).where('bot_id', '=', botId).where('answered_at', 'is', null).where('created_at', '>=', notBefore)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async purgeOlderThan(time: number): Promise<number> {
    const r = await this.db.deleteFrom('bot_callback_queries').where('created_at', '<', time).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
