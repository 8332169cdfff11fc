import type { Kysely, Migration } from 'kysely';

/**
 * 0032_email_verification (issue 26 item 3): `users.email_verified` (0 for
 * every existing account: nobody has followed a link yet) and
 * `email_verifications`, the links: SHA-256 of the token, the exact address
 * it confirms, when it lapses, and when it was used (or replaced by a newer
 * link of the account: src/core/account/verify-email.ts).
 */
export const emailVerificationMigration: Migration = {
  async up(db: Kysely<unknown>) {
    try {
      await db.schema.alterTable('users').addColumn('email_verified', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    } catch (e) {
      // Another process migrating the same fresh SQLite file added it first (see 0005_federation),
      // or sign-up's migration did (0030_signup adds the same column and table): the same shape either way.
      if (!/duplicate column|already exists/i.test((e as Error).message)) throw e;
    }
    await db.schema.createTable('email_verifications').ifNotExists()
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('email_verifications_user').ifNotExists().on('email_verifications').column('user_id').execute();
  },
};
