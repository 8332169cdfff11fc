import type { Kysely, Migration } from 'kysely';

/**
 * 0030_signup (issue 26 item 2): invitations to sign up, keyed by the
 * SHA-256 of their token and used up by one conditional UPDATE
 * (src/store/account/invitations.ts).
 */
export const signupMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('signup_invitations')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('invited_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .addColumn('user_id', 'text')
      .execute();
  },
};
