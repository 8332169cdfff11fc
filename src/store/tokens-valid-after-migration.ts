import type { Kysely, Migration } from 'kysely';

/**
 * 0029_tokens_valid_after (issue 24, finding 2): `users.tokens_valid_after`,
 * set to the time of the account's latest lock and kept by an unlock, so a
 * self-contained (JWT) access token issued before a lock is refused for good
 * (src/core/account-lock.ts); null: never locked.
 */
export const tokensValidAfterMigration: Migration = {
  async up(db: Kysely<unknown>) {
    try {
      await db.schema.alterTable('users').addColumn('tokens_valid_after', 'bigint').execute();
    } catch (e) {
      // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
      if (!/duplicate column/i.test((e as Error).message)) throw e;
    }
  },
};
