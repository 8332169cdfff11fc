import type { Kysely, Migration } from 'kysely';

/**
 * 0002_bot: the chat-bot interface. Ids the Bot API shows (bots, people,
 * update_id) are bigint; message_id is per chat. Tokens are stored as SHA-256.
 * IF NOT EXISTS everywhere: kysely takes no migration lock on SQLite, so two
 * processes starting on one fresh file may both run this; the loser's retry
 * then finds it recorded.
 */
export const botMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('bots').ifNotExists()
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('username_lower', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('owner_user_id', 'text')
      .addColumn('token_hash', 'text', (c) => c.unique())
      .addColumn('webhook_url', 'text')
      .addColumn('webhook_secret', 'text')
      .addColumn('webhook_max_connections', 'integer')
      .addColumn('webhook_allowed_updates', 'text')
      .addColumn('webhook_set_at', 'bigint')
      .addColumn('allowed_updates', 'text')
      .addColumn('last_error_date', 'bigint')
      .addColumn('last_error_message', 'text')
      .addColumn('last_update_id', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('bots_owner').ifNotExists().on('bots').column('owner_user_id').execute();

    await db.schema.createTable('bot_people').ifNotExists()
      .addColumn('user_id', 'text', (c) => c.primaryKey())
      .addColumn('id', 'bigint', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema.createTable('bot_chats').ifNotExists()
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('chat_id', 'bigint', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('last_message_id', 'integer', (c) => c.notNull())
      .addColumn('state', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('bot_chats_pk', ['bot_id', 'chat_id'])
      .execute();
    await db.schema.createIndex('bot_chats_user').ifNotExists().on('bot_chats').column('user_id').execute();

    await db.schema.createTable('bot_messages').ifNotExists()
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('chat_id', 'bigint', (c) => c.notNull())
      .addColumn('message_id', 'integer', (c) => c.notNull())
      .addColumn('from_bot', 'integer', (c) => c.notNull())
      .addColumn('date', 'bigint', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('entities', 'text')
      .addColumn('reply_to_message_id', 'integer')
      .addColumn('edit_date', 'bigint')
      .addPrimaryKeyConstraint('bot_messages_pk', ['bot_id', 'chat_id', 'message_id'])
      .execute();

    await db.schema.createTable('bot_updates').ifNotExists()
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('update_id', 'bigint', (c) => c.notNull())
      .addColumn('chat_id', 'bigint')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('bot_updates_pk', ['bot_id', 'update_id'])
      .execute();
    await db.schema.createIndex('bot_updates_created').ifNotExists().on('bot_updates').column('created_at').execute();
  },
};
