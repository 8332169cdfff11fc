import type { Kysely, Migration } from 'kysely';

/**
 * 0021_reauth (issue 24):
 * - `sessions.verified_at`: when the person last gave the password or a
 *   second factor to the session after signing in (sudo mode,
 *   src/core/reauth.ts); null: only at sign-in (`auth_time`).
 * - `mfa_options.chat_approval_request*`: turning approval in chat on waits
 *   for a tap in the linked chat (src/core/mfa/approval-setup.ts); the open
 *   request's id, the chat it was sent to and when it expires.
 */
async function addColumn(db: Kysely<unknown>, table: string, column: string, type: 'text' | 'bigint'): Promise<void> {
  try {
    await db.schema.alterTable(table).addColumn(column, type).execute();
  } catch (e) {
    // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
    if (!/duplicate column/i.test((e as Error).message)) throw e;
  }
}

export const reauthMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'sessions', 'verified_at', 'bigint');
    await addColumn(db, 'mfa_options', 'chat_approval_request', 'text');
    await addColumn(db, 'mfa_options', 'chat_approval_request_chat', 'text');
    await addColumn(db, 'mfa_options', 'chat_approval_request_expires_at', 'bigint');
    await db.schema.createIndex('mfa_options_chat_approval_request').ifNotExists().on('mfa_options').column('chat_approval_request').execute();
  },
};
