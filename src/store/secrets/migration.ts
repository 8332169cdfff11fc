import type { Kysely, Migration } from 'kysely';

/**
 * 0006_secrets: one row sealed under the deployment's secret key, so a
 * process started with another key is refused at start (src/store/secrets/sealed.ts).
 * The secrets themselves stay in their columns; existing plaintext is
 * encrypted at the first start that has a key.
 */
export const secretsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createTable('secret_key_check').ifNotExists()
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('sealed', 'text', (c) => c.notNull())
      .execute();
  },
};
