import type { Kysely, Migration } from 'kysely';

/**
 * 0008_oauth_current: the current generation of OAuth (docs/security.md).
 * - `clients.id_token_alg` (OpenID Connect Registration §2
 *   `id_token_signed_response_alg`; null: ES256), `clients.require_par`
 *   (RFC 9126 §6), `clients.jwks` / `clients.jwks_uri` (RFC 7591 §2, the keys
 *   of a `private_key_jwt` client) and `clients.jwt_secret` (the secret of a
 *   `client_secret_jwt` client, sealed: the server needs it in clear to check
 *   an HMAC, so it cannot be kept as a hash).
 * - `pushed_requests`: RFC 9126 pushed authorization requests, by the hash
 *   of their `request_uri`; deleting the row is what consumes it.
 * - `replay_jtis`: `jti`s seen within their token's lifetime (client
 *   assertions, RFC 7523 §3 item 7), keyed by purpose, issuer and jti; the
 *   primary key makes the first insert the only one that succeeds, across
 *   processes.
 */
async function addColumn(db: Kysely<unknown>, table: string, column: string, type: 'text' | 'integer'): Promise<void> {
  try {
    await db.schema.alterTable(table).addColumn(column, type).execute();
  } catch (e) {
    // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
    if (!/duplicate column/i.test((e as Error).message)) throw e;
  }
}

export const oauthCurrentMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'clients', 'id_token_alg', 'text');
    await addColumn(db, 'clients', 'require_par', 'integer');
    await addColumn(db, 'clients', 'jwks', 'text');
    await addColumn(db, 'clients', 'jwks_uri', 'text');
    await addColumn(db, 'clients', 'jwt_secret', 'text');

    await db.schema.createTable('pushed_requests').ifNotExists()
      .addColumn('uri_hash', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('params', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('pushed_requests_expires').ifNotExists().on('pushed_requests').column('expires_at').execute();

    await db.schema.createTable('replay_jtis').ifNotExists()
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('replay_jtis_expires').ifNotExists().on('replay_jtis').column('expires_at').execute();
  },
};
