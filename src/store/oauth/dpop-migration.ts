import type { Kysely, Migration } from 'kysely';

/**
 * 0012_dpop: DPoP (RFC 9449), beside the RFC 8705 certificate binding of
 * 0005 (`access_tokens.cnf_x5t`).
 * - `clients.dpop_bound_access_tokens` (§5.2): the client must use DPoP.
 * - `authorization_codes.dpop_jkt` (§10): the key the code must be redeemed with.
 * - `refresh_tokens.cnf_jkt` (§5): a public client's refresh token is bound to its key.
 * - `access_tokens.cnf_jkt` (§6): the key an opaque access token is bound to.
 */
async function addColumn(db: Kysely<unknown>, table: string, column: string, type: 'text' | 'integer'): Promise<void> {
  try {
    await db.schema.alterTable(table).addColumn(column, type).execute();
  } catch (e) {
    // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
    if (!/duplicate column/i.test((e as Error).message)) throw e;
  }
}

export const dpopMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'clients', 'dpop_bound_access_tokens', 'integer');
    await addColumn(db, 'authorization_codes', 'dpop_jkt', 'text');
    await addColumn(db, 'refresh_tokens', 'cnf_jkt', 'text');
    await addColumn(db, 'access_tokens', 'cnf_jkt', 'text');
  },
};
