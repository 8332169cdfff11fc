import type { ColumnDataType, Kysely, Migration } from 'kysely';

/**
 * SQLite has no ADD COLUMN IF NOT EXISTS, and kysely takes no migration lock
 * there: a second process migrating the same fresh file may have added the
 * column a moment ago. That is the only error let through (PostgreSQL runs
 * migrations under a lock, in a transaction, so it never gets here).
 */
export async function addColumn(db: Kysely<unknown>, table: string, column: string, type: ColumnDataType, notNullDefault?: string): Promise<void> {
  try {
    await db.schema.alterTable(table)
      .addColumn(column, type, (c) => (notNullDefault === undefined ? c : c.notNull().defaultTo(notNullDefault)))
      .execute();
  } catch (e) {
    if (!/duplicate column/i.test(String((e as Error).message))) throw e;
  }
}

/**
 * 0004_oidc: OpenID Connect and single sign-on.
 * - clients: where RP-initiated logout may return to, and where back-channel
 *   logout tokens go (OpenID Connect RP-Initiated Logout 1.0 §3.1,
 *   Back-Channel Logout 1.0 §2.2).
 * - sessions: the public session id (`sid`) and the browser's name.
 * - sso_sign_ins: which applications each session signed in to.
 */
export const oidcMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'clients', 'post_logout_redirect_uris', 'text', '[]');
    await addColumn(db, 'clients', 'backchannel_logout_uri', 'text');
    await addColumn(db, 'sessions', 'sid', 'text');
    await addColumn(db, 'sessions', 'user_agent', 'text');

    await db.schema.createTable('sso_sign_ins').ifNotExists()
      .addColumn('family_id', 'text', (c) => c.primaryKey())
      .addColumn('sid', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('ended_at', 'bigint')
      .execute();
    await db.schema.createIndex('sso_sign_ins_sid').ifNotExists().on('sso_sign_ins').column('sid').execute();
    await db.schema.createIndex('sso_sign_ins_ended').ifNotExists().on('sso_sign_ins').column('ended_at').execute();
    await db.schema.createIndex('sso_sign_ins_created').ifNotExists().on('sso_sign_ins').column('created_at').execute();
  },
};
