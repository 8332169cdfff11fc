import type { Kysely, Migration } from 'kysely';

/**
 * 0009_admin_users: who may use the admin console (`gatehouse user create
 * … --admin`) and which accounts an administrator locked. Flags are integers
 * and times bigint on both dialects, like every other migration.
 */
export const adminUsersMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('users').addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('users').addColumn('locked_at', 'bigint').execute();
  },
};
