import type { Kysely } from 'kysely';
import type { AuthorizationCode, RefreshToken } from '../../core/model.js';
import type { CodeRedemption, RefreshRotation } from '../../core/ports.js';
import type { AuthorizationCodesTable, DB, RefreshTokensTable } from '../schema.js';
import { run, statement } from './statements.js';
import { toCode, toRefresh } from './rows.js';

/**
 * The one-step rotation and code redemption (`TokenStore.rotateRefresh`,
 * `CodeStore.redeem`): every check that decides the outcome is a condition of
 * the UPDATE that takes the grant, so the step either writes everything or
 * nothing. On PostgreSQL it is one statement (data-modifying CTEs), one
 * round trip and one commit; SQLite has no such CTEs, so there it is the
 * UPDATE … RETURNING and the INSERTs in one transaction, all prepared once.
 */

const ROTATE_WHERE = 'token_hash = ? AND client_id = ? AND rotated_at IS NULL AND revoked_at IS NULL AND expires_at > ? '
  + 'AND (cnf_jkt IS NULL OR cnf_jkt = ?) '
  + 'AND EXISTS (SELECT 1 FROM token_families f WHERE f.id = refresh_tokens.family_id AND f.revoked_at IS NULL)';

const NEXT_REFRESH = 'INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, scope, resources, created_at, expires_at, rotated_at, revoked_at, cnf_jkt)';

const ROTATE_SQLITE = statement(`UPDATE refresh_tokens SET rotated_at = ? WHERE ${ROTATE_WHERE} RETURNING *`);
const NEXT_SQLITE = statement(`${NEXT_REFRESH} VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`);

// A row another transaction is rotating or revoking right now is skipped, not waited for (as in
// markRotated): the step then writes nothing, and the caller's step-by-step path calls it a reuse.
const ROTATE_PG = statement(`WITH old AS (
  UPDATE refresh_tokens SET rotated_at = ?::bigint WHERE ${ROTATE_WHERE}
    AND token_hash IN (SELECT token_hash FROM refresh_tokens WHERE token_hash = ? FOR UPDATE SKIP LOCKED)
  RETURNING *
), next AS (
  ${NEXT_REFRESH} SELECT ?::text, family_id, client_id, user_id, scope, resources, ?::bigint, ?::bigint, NULL, NULL, ?::text FROM old
)
SELECT * FROM old`);

export async function rotateRefresh(db: Kysely<DB>, postgres: boolean, r: RefreshRotation): Promise<RefreshToken | undefined> {
  const where = [r.tokenHash, r.clientId, r.now, r.jkt];
  if (postgres) {
    const { rows } = await run<RefreshTokensTable>(db, true, ROTATE_PG,
      [r.now, ...where, r.tokenHash, r.next.tokenHash, r.now, r.next.expiresAt, r.next.dpopJkt]);
    return rows[0] && toRefresh(rows[0]);
  }
  return db.transaction().execute(async (trx) => {
    const old = (await run<RefreshTokensTable>(trx, false, ROTATE_SQLITE, [r.now, ...where])).rows[0];
    if (!old) return undefined;
    await run(trx, false, NEXT_SQLITE, [r.next.tokenHash, old.family_id, old.client_id, old.user_id, old.scope, old.resources, r.now, r.next.expiresAt, r.next.dpopJkt]);
    return toRefresh(old);
  });
}

// The PKCE challenge is compared here, not in constant time: a code whose comparison fails is then
// burnt by the step-by-step path, so no second guess is ever compared against it.
const REDEEM_WHERE = 'code_hash = ? AND client_id = ? AND consumed_at IS NULL AND expires_at > ? '
  + 'AND (redirect_uri IS NULL OR redirect_uri = ?) AND code_challenge IS NOT DISTINCT FROM ? AND (dpop_jkt IS NULL OR dpop_jkt = ?)';

const FAMILY = 'INSERT INTO token_families (id, client_id, user_id, scope, created_at, revoked_at)';

const REDEEM_SQLITE = statement(`UPDATE authorization_codes SET consumed_at = ? WHERE ${REDEEM_WHERE.replace('IS NOT DISTINCT FROM', 'IS')} RETURNING *`);
const FAMILY_SQLITE = statement(`${FAMILY} VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT (id) DO NOTHING`);

const redeemPg = (withRefresh: boolean) => statement(`WITH c AS (
  UPDATE authorization_codes SET consumed_at = ?::bigint
  WHERE code_hash = ? AND client_id = ? AND consumed_at IS NULL AND expires_at > ?::bigint
    AND (redirect_uri IS NULL OR redirect_uri = ?::text) AND code_challenge IS NOT DISTINCT FROM ?::text AND (dpop_jkt IS NULL OR dpop_jkt = ?::text)
  RETURNING *
), f AS (
  ${FAMILY} SELECT family_id, client_id, user_id, scope, ?::bigint, NULL FROM c ON CONFLICT (id) DO NOTHING
)${withRefresh ? `, r AS (
  ${NEXT_REFRESH} SELECT ?::text, family_id, client_id, user_id, scope, resources, ?::bigint, ?::bigint, NULL, NULL, ?::text FROM c
)` : ''}
SELECT * FROM c`);
const REDEEM_PG = { withRefresh: redeemPg(true), without: redeemPg(false) };

export async function redeemCode(db: Kysely<DB>, postgres: boolean, r: CodeRedemption): Promise<AuthorizationCode | undefined> {
  const where = [r.codeHash, r.clientId, r.now, r.redirectUri, r.challenge, r.jkt];
  if (postgres) {
    const next = r.refresh ? [r.refresh.tokenHash, r.now, r.refresh.expiresAt, r.refresh.dpopJkt] : [];
    const { rows } = await run<AuthorizationCodesTable>(db, true, r.refresh ? REDEEM_PG.withRefresh : REDEEM_PG.without, [r.now, ...where, r.now, ...next]);
    return rows[0] && toCode(rows[0]);
  }
  return db.transaction().execute(async (trx) => {
    const c = (await run<AuthorizationCodesTable>(trx, false, REDEEM_SQLITE, [r.now, ...where])).rows[0];
    if (!c) return undefined;
    await run(trx, false, FAMILY_SQLITE, [c.family_id, c.client_id, c.user_id, c.scope, r.now]);
    if (r.refresh) {
      await run(trx, false, NEXT_SQLITE, [r.refresh.tokenHash, c.family_id, c.client_id, c.user_id, c.scope, c.resources, r.now, r.refresh.expiresAt, r.refresh.dpopJkt]);
    }
    return toCode(c);
  });
}
