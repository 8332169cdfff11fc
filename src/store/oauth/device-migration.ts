import type { Kysely, Migration } from 'kysely';

/**
 * Device authorization (RFC 8628) and CIBA (OpenID Connect CIBA Core 1.0).
 * - `backchannel_requests`: one row per device or CIBA request, found by the
 *   SHA-256 of its device_code / auth_req_id (`secret_hash`) or of its user
 *   code; `last_poll_at` and `interval_s` make slow_down one conditional
 *   UPDATE; `consumed_at` makes the tokens single-use.
 * - `clients.backchannel_token_delivery_mode` (`poll` or `ping`) and
 *   `clients.backchannel_client_notification_endpoint` (CIBA Core §4).
 */
async function addColumn(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  try {
    await db.schema.alterTable(table).addColumn(column, 'text').execute();
  } catch (e) {
    // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
    if (!/duplicate column/i.test((e as Error).message)) throw e;
  }
}

export const backchannelMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'clients', 'backchannel_token_delivery_mode');
    await addColumn(db, 'clients', 'backchannel_client_notification_endpoint');
    await db.schema.createTable('backchannel_requests').ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_code_hash', 'text', (c) => c.unique())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('binding_message', 'text')
      .addColumn('notification_token', 'text')
      .addColumn('interval_s', 'integer', (c) => c.notNull())
      .addColumn('last_poll_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .execute();
    await db.schema.createIndex('backchannel_requests_expires').ifNotExists().on('backchannel_requests').column('expires_at').execute();
  },
};
