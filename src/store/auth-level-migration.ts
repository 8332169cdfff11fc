import type { Kysely, Migration } from 'kysely';
import { addColumn } from './oidc/migration.js';

/**
 * 0033_auth_levels (issue 28 item 3): how a session was authenticated, as
 * RFC 8176 method values separated by spaces (src/core/oidc/acr.ts), on the
 * session and on each sign-in record, where ID tokens (also on refresh) and
 * JWT access tokens read `acr`/`amr`. Null: from before, counted as password.
 */
export const authLevelsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'sessions', 'amr', 'text');
    await addColumn(db, 'sso_sign_ins', 'amr', 'text');
  },
};
