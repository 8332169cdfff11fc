import type { Kysely, Migration } from 'kysely';

/**
 * 0023_exchange_ciba (issue 24, findings 3 and 4):
 * - `clients.public_token_exchange`: the operator lets this public client use
 *   token exchange (RFC 8693); without it only confidential clients may.
 * - `backchannel_requests (user_id, status)`: the count of a person's waiting
 *   CIBA requests, taken before each new one (at most 3 wait per person).
 */
export const exchangeCibaMigration: Migration = {
  async up(db: Kysely<unknown>) {
    try {
      await db.schema.alterTable('clients').addColumn('public_token_exchange', 'integer').execute();
    } catch (e) {
      // Another process migrating the same fresh SQLite file added it first (see 0005_federation).
      if (!/duplicate column/i.test((e as Error).message)) throw e;
    }
    await db.schema.createIndex('backchannel_requests_user_status').ifNotExists().on('backchannel_requests').columns(['user_id', 'status']).execute();
  },
};
