import type { Kysely, Migration } from 'kysely';

/**
 * 0005_federation: third-party login and application-level access.
 * - `external_identities`: who an external provider's account is here
 *   (provider, subject → user); one local user may have several.
 * - `federation_flows`: a sign-in in progress at a provider (state, PKCE
 *   verifier, nonce) or a first sign-in waiting for the person to create or
 *   link an account; keyed by the hash of the random handle in the browser.
 * - `clients.tls_cert_thumbprint` (RFC 8705 self_signed_tls_client_auth),
 *   `clients.allowed_addresses` (CIDR blocks, space-separated) and
 *   `access_tokens.cnf_x5t` (the certificate an opaque token is bound to).
 */
/**
 * kysely takes no migration lock on SQLite, and SQLite has no ADD COLUMN IF
 * NOT EXISTS: when two processes migrate one fresh file together, the one
 * that finds a column already added goes on (as IF NOT EXISTS would).
 */
async function addColumn(db: Kysely<unknown>, table: string, column: string): Promise<void> {
  try {
    await db.schema.alterTable(table).addColumn(column, 'text').execute();
  } catch (e) {
    if (!/duplicate column/i.test((e as Error).message)) throw e;
  }
}

export const federationMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'clients', 'tls_cert_thumbprint');
    await addColumn(db, 'clients', 'allowed_addresses');
    await addColumn(db, 'access_tokens', 'cnf_x5t');

    await db.schema.createTable('external_identities').ifNotExists()
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_login_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('external_identities_pk', ['provider', 'subject'])
      .execute();
    await db.schema.createIndex('external_identities_user').ifNotExists().on('external_identities').column('user_id').execute();

    await db.schema.createTable('federation_flows').ifNotExists()
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('federation_flows_expires').ifNotExists().on('federation_flows').column('expires_at').execute();
  },
};
