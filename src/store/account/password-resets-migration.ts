import type { Kysely, Migration } from 'kysely';

/**
 * 0031_password_resets (issue 26, item 4): a password reset under way, by
 * the SHA-256 of its token (the e-mailed link's, or the browser cookie's when
 * it goes by chat); never the token itself. A reset for a name that matches
 * no account has no user_id. By chat it carries the number matching of
 * sign-in approval (src/core/account/reset-approval.ts); `factor_at` says a
 * second factor was given, `used_at` makes it single use (one conditional UPDATE).
 */
export const passwordResetsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('password_resets')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text')
      .addColumn('via', 'text', (c) => c.notNull())
      .addColumn('ip', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('factor_at', 'bigint')
      .addColumn('approval_id', 'text', (c) => c.unique())
      .addColumn('approval_number', 'integer')
      .addColumn('approval_choices', 'text')
      .addColumn('approval_chat_id', 'text')
      .addColumn('approval_message_id', 'bigint')
      .addColumn('approval_state', 'text')
      .addColumn('approval_expires_at', 'bigint')
      .execute();
    await db.schema.createIndex('password_resets_user').on('password_resets').column('user_id').execute();
    await db.schema.createIndex('password_resets_expires').on('password_resets').column('expires_at').execute();
  },
};
