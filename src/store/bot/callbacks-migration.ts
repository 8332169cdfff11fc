import { sql, type Kysely, type Migration } from 'kysely';

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

/**
 * 0020_bot_callback_answered: 0017's index found a button's presses but
 * still read every one of them (each press is a row) to pick the newest
 * answered one, so a press cost more the more the button had been pressed.
 * This one ends at the answer time and holds answered presses only: the
 * lookup reads one index entry, and an insert (a press) no longer updates an
 * index of its message. It replaces 0017's.
 */
export const botCallbackAnsweredMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('bot_callback_queries_answered').ifNotExists().on('bot_callback_queries')
      .columns(['bot_id', 'chat_id', 'message_id', 'data', 'answered_at']).where(sql.ref('answered_at'), 'is not', null).execute();
    await db.schema.dropIndex('bot_callback_queries_message').ifExists().execute();
  },
};
