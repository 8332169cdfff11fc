import type { Kysely, Migration } from 'kysely';

/**
 * 0024_notify_link_codes (issue 24, finding 7): the one-time codes that link a
 * chat to the signed-in person who asked at /account/security. Kept by
 * SHA-256 only; a code is burnt by the DELETE that reads it.
 */
export const notifyLinkCodesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('notify_link_codes').ifNotExists()
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('notify_link_codes_user').ifNotExists().on('notify_link_codes').column('user_id').execute();
  },
};
