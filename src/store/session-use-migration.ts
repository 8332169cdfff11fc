import type { Kysely, Migration } from 'kysely';

/**
 * 0016_session_use: the account page tells a person's sessions apart by
 * where and when each was last used (`sessions.ip`, `sessions.last_used_at`;
 * both null until the session's first use after sign-in).
 */
async function addColumn(db: Kysely<unknown>, column: string, type: 'text' | 'bigint'): Promise<void> {
  try {
    await db.schema.alterTable('sessions').addColumn(column, type).execute();
  } catch (e) {
    // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
    if (!/duplicate column/i.test((e as Error).message)) throw e;
  }
}

export const sessionUseMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'ip', 'text');
    await addColumn(db, 'last_used_at', 'bigint');
  },
};
