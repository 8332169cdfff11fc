import type { Kysely, Migration } from 'kysely';

/**
 * 0018_registration: dynamic client registration (RFC 7591, RFC 7592),
 * resource indicators (RFC 8707) and token exchange (RFC 8693).
 * - `registration_tokens`: initial access tokens (`gatehouse registration
 *   token`), by SHA-256, with the registrations they still allow (`uses`)
 *   and their expiry; one conditional UPDATE takes a use.
 * - `client_registrations`: per dynamically registered client, the SHA-256 of
 *   its registration access token and the metadata Gatehouse keeps only for
 *   RFC 7592 reads (contacts, logo_uri, …; JSON).
 * - `clients.resources`, `authorization_codes.resources`,
 *   `refresh_tokens.resources` (space-separated URIs), `access_tokens.audience`
 *   and `access_tokens.act` (an exchanged opaque token's `act` claim, JSON).
 */
async function addColumn(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  try {
    await db.schema.alterTable(table).addColumn(column, 'text').execute();
  } catch (e) {
    // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
    if (!/duplicate column/i.test((e as Error).message)) throw e;
  }
}

export const registrationMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'clients', 'resources');
    await addColumn(db, 'authorization_codes', 'resources');
    await addColumn(db, 'refresh_tokens', 'resources');
    await addColumn(db, 'access_tokens', 'audience');
    await addColumn(db, 'access_tokens', 'act');

    await db.schema.createTable('registration_tokens').ifNotExists()
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('uses', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema.createTable('client_registrations').ifNotExists()
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
