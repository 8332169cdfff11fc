import type { Kysely, Migration } from 'kysely';

/**
 * 0027_mail: e-mail through the outbox. `mail_messages` holds what each
 * queued message says, sealed under the secret key (its links carry
 * single-use tokens), keyed by its outbox row. Its deliveries go to the
 * built-in endpoint of kind `email`, made by the first message queued
 * (src/store/mail/outbox.ts), so the worker's leases, retries and dead
 * letters carry e-mail too.
 */
export const mailMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('mail_messages')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('message', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
