import type { Kysely, Migration } from 'kysely';

/**
 * 0017_bot_callback_cache: answerCallbackQuery's cache_time looks up the
 * last answered press of a button on a message at every press; this index
 * keeps that lookup from reading every query of the bot.
 */
export const botCallbackCacheMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('bot_callback_queries_message').ifNotExists().on('bot_callback_queries').columns(['bot_id', 'chat_id', 'message_id']).execute();
  },
};
