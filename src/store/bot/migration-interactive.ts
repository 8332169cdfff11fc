import type { Kysely, Migration } from 'kysely';

/**
 * 0007_bot_interactive: two-way chats. Messages keep their reply_markup and,
 * for kinds other than text, their content (JSON); a person's button press is
 * a callback query, answered at most once; bots keep their commands per scope
 * and language, and their name and descriptions per language ('' = default).
 */
export const botInteractiveMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('bot_messages').addColumn('reply_markup', 'text').execute();
    await db.schema.alterTable('bot_messages').addColumn('content', 'text').execute();

    await db.schema.createTable('bot_callback_queries').ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('chat_id', 'bigint', (c) => c.notNull())
      .addColumn('message_id', 'integer', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('answered_at', 'bigint')
      .addColumn('answer', 'text')
      .execute();
    await db.schema.createIndex('bot_callback_queries_bot').ifNotExists().on('bot_callback_queries').column('bot_id').execute();
    await db.schema.createIndex('bot_callback_queries_created').ifNotExists().on('bot_callback_queries').column('created_at').execute();

    await db.schema.createTable('bot_commands').ifNotExists()
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('language_code', 'text', (c) => c.notNull())
      .addColumn('commands', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('bot_commands_pk', ['bot_id', 'scope', 'language_code'])
      .execute();

    await db.schema.createTable('bot_profiles').ifNotExists()
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('language_code', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      .addColumn('description', 'text')
      .addColumn('short_description', 'text')
      .addPrimaryKeyConstraint('bot_profiles_pk', ['bot_id', 'language_code'])
      .execute();
  },
};
