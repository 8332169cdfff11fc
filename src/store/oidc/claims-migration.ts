import type { Kysely, Migration } from 'kysely';
import { addColumn } from './migration.js';

/**
 * 0026_oidc_claims: the OpenID Connect `claims` request parameter (Core §5.5)
 * is kept on the sign-in record of the grant's family, where the ID token
 * and the UserInfo endpoint look it up (src/core/oidc/claims-request.ts).
 */
export const oidcClaimsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await addColumn(db, 'sso_sign_ins', 'claims', 'text');
  },
};
