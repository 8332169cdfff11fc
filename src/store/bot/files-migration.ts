import { sql, type Kysely, type Migration } from 'kysely';

/**
 * 0011_bot_files: files bots send (photos, documents). A row per file_id
 * (per bot); the bytes are in the blob store under `blob_key`. A grant row
 * per chat the file was sent into lets that chat's person read it.
 */
export const botFilesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('bot_files').ifNotExists()
      .addColumn('file_id', 'text', (c) => c.primaryKey())
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('unique_id', 'text', (c) => c.notNull())
      .addColumn('blob_key', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('mime_type', 'text')
      .addColumn('file_name', 'text')
      .addColumn('width', 'integer')
      .addColumn('height', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('bot_files_bot').ifNotExists().on('bot_files').column('bot_id').execute();

    await db.schema.createTable('bot_file_chats').ifNotExists()
      .addColumn('file_id', 'text', (c) => c.notNull())
      .addColumn('chat_id', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('bot_file_chats_pk', ['file_id', 'chat_id'])
      .execute();
  },
};

/**
 * 0025_bot_file_quota: the bytes each bot's files add up to (GATEHOUSE_BOT_FILE_QUOTA
 * bounds it; src/store/bot/files.ts raises it with the insert), from the rows
 * stored so far; and an index to find whether any row still names a blob
 * (the sweep of unused bytes).
 */
export const botFileQuotaMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('bot_file_usage').ifNotExists()
      .addColumn('bot_id', 'bigint', (c) => c.primaryKey())
      .addColumn('bytes', 'bigint', (c) => c.notNull())
      .execute();
    await sql`INSERT INTO bot_file_usage (bot_id, bytes) SELECT bot_id, SUM(size) FROM bot_files GROUP BY bot_id`.execute(db);
    await db.schema.createIndex('bot_files_blob').ifNotExists().on('bot_files').column('blob_key').execute();
  },
};
