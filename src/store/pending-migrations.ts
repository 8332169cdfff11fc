/**
 * GATEHOUSE_MIGRATE=off and the database is behind this version: `serve`
 * does not start. A file of its own (no kysely) so that src/cli/main.ts can
 * recognise it without loading the migrations.
 */
export class PendingMigrationsError extends Error {
  override name = 'PendingMigrationsError';
  constructor(readonly pending: readonly string[]) {
    super(`${pending.length} database migration(s) pending: ${pending.join(', ')}. With GATEHOUSE_MIGRATE=off serve does not apply them: `
      + 'run `gatehouse migrate` (same GATEHOUSE_DATABASE_URL) first, then start serve again');
  }
}
