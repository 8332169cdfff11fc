import type { Kysely } from 'kysely';
import type { AuthorizationCode, RefreshToken } from '../../core/model.js';
import type { CodeRedemption, RefreshRotation } from '../../core/ports.js';
import type { AuthorizationCodesTable, DB, RefreshTokensTable } from '../schema.js';
import { run, statement } from './statements.js';
import { toCode, toRefresh } from './rows.js';
import { GroupCommit } from '../../core/group-commit.js';
import { sqliteGroup } from './group-commit.js';

/**
 * The one-step rotation and code redemption (`TokenStore.rotateRefresh`,
 * `CodeStore.redeem`): every check that decides the outcome is a condition of
 * the UPDATE that takes the grant, so each step writes everything or nothing.
 * Concurrent steps are group-committed (src/store/oauth/group-commit.ts). On
 * PostgreSQL a group is one statement (data-modifying CTEs over the group's
 * rows, unnest), one round trip and one commit; SQLite has no such CTEs, so
 * there a group is each step's UPDATE … RETURNING and INSERTs, prepared once,
 * in one transaction.
 */

const NEXT_REFRESH = 'INSERT INTO refresh_tokens (token_hash, family_id, client_id, user_id, scope, resources, created_at, expires_at, rotated_at, revoked_at, cnf_jkt)';
const FAMILY = 'INSERT INTO token_families (id, client_id, user_id, scope, created_at, revoked_at)';

const ROTATE_SQLITE = statement('UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND client_id = ? AND rotated_at IS NULL AND revoked_at IS NULL '
  + 'AND expires_at > ? AND (cnf_jkt IS NULL OR cnf_jkt = ?) '
  + 'AND EXISTS (SELECT 1 FROM token_families f WHERE f.id = refresh_tokens.family_id AND f.revoked_at IS NULL) RETURNING *');
const NEXT_SQLITE = statement(`${NEXT_REFRESH} VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`);

async function rotateSqlite(trx: Kysely<DB>, r: RefreshRotation): Promise<RefreshToken | undefined> {
  const old = (await run<RefreshTokensTable>(trx, false, ROTATE_SQLITE, [r.now, r.tokenHash, r.clientId, r.now, r.jkt])).rows[0];
  if (!old) return undefined;
  await run(trx, false, NEXT_SQLITE, [r.next.tokenHash, old.family_id, old.client_id, old.user_id, old.scope, old.resources, r.now, r.next.expiresAt, r.next.dpopJkt]);
  return toRefresh(old);
}

// A row another transaction is rotating or revoking right now is skipped, not waited for (as in
// markRotated): that step then writes nothing, and the caller's step-by-step path calls it a reuse.
// `token_hash = ANY(…)` and the family as a scalar subquery keep the plan on the primary keys
// whatever the planner estimates (with EXISTS it could start from the family's index and scan
// every token of a large family).
const ROTATE_PG = statement(`WITH q AS (
  SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::text[]) AS q(hash, client_id, now, jkt, next_hash, next_expires, next_jkt)
), locked AS MATERIALIZED (
  SELECT token_hash FROM refresh_tokens WHERE token_hash = ANY(?::text[]) FOR UPDATE SKIP LOCKED
), old AS (
  UPDATE refresh_tokens t SET rotated_at = q.now FROM q, locked l
  WHERE t.token_hash = ANY(?::text[]) AND t.token_hash = q.hash AND l.token_hash = q.hash AND t.client_id = q.client_id
    AND t.rotated_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > q.now AND (t.cnf_jkt IS NULL OR t.cnf_jkt = q.jkt)
    AND (SELECT f.revoked_at IS NULL FROM token_families f WHERE f.id = t.family_id)
  RETURNING t.*, q.now AS q_now, q.next_hash, q.next_expires, q.next_jkt
), next AS (
  ${NEXT_REFRESH} SELECT next_hash, family_id, client_id, user_id, scope, resources, q_now, next_expires, NULL, NULL, next_jkt FROM old
)
SELECT token_hash, family_id, client_id, user_id, scope, resources, created_at, expires_at, rotated_at, revoked_at, cnf_jkt FROM old`);

async function rotatePg(db: Kysely<DB>, rs: RefreshRotation[]): Promise<(RefreshToken | undefined)[]> {
  const col = <T>(f: (r: RefreshRotation) => T) => rs.map(f);
  const hashes = col((r) => r.tokenHash);
  const { rows } = await run<RefreshTokensTable>(db, true, ROTATE_PG, [
    hashes, col((r) => r.clientId), col((r) => r.now), col((r) => r.jkt), col((r) => r.next.tokenHash), col((r) => r.next.expiresAt), col((r) => r.next.dpopJkt), hashes, hashes,
  ]);
  const byHash = new Map(rows.map((row) => [row.token_hash, row]));
  return rs.map((r) => {
    const row = byHash.get(r.tokenHash);
    return row && toRefresh(row);
  });
}

// The PKCE challenge is compared here, not in constant time: a code whose comparison fails is then
// burnt by the step-by-step path, so no second guess is ever compared against it.
const REDEEM_SQLITE = statement('UPDATE authorization_codes SET consumed_at = ? WHERE code_hash = ? AND client_id = ? AND consumed_at IS NULL AND expires_at > ? '
  + 'AND (redirect_uri IS NULL OR redirect_uri = ?) AND code_challenge IS ? AND (dpop_jkt IS NULL OR dpop_jkt = ?) RETURNING *');
const FAMILY_SQLITE = statement(`${FAMILY} VALUES (?, ?, ?, ?, ?, NULL) ON CONFLICT (id) DO NOTHING`);

async function redeemSqlite(trx: Kysely<DB>, r: CodeRedemption): Promise<AuthorizationCode | undefined> {
  const c = (await run<AuthorizationCodesTable>(trx, false, REDEEM_SQLITE, [r.now, r.codeHash, r.clientId, r.now, r.redirectUri, r.challenge, r.jkt])).rows[0];
  if (!c) return undefined;
  await run(trx, false, FAMILY_SQLITE, [c.family_id, c.client_id, c.user_id, c.scope, r.now]);
  if (r.refresh) {
    await run(trx, false, NEXT_SQLITE, [r.refresh.tokenHash, c.family_id, c.client_id, c.user_id, c.scope, c.resources, r.now, r.refresh.expiresAt, r.refresh.dpopJkt]);
  }
  return toCode(c);
}

const REDEEM_PG = statement(`WITH q AS (
  SELECT * FROM unnest(?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[])
    AS q(hash, client_id, now, redirect_uri, challenge, jkt, next_hash, next_expires, next_jkt)
), c AS (
  UPDATE authorization_codes a SET consumed_at = q.now FROM q
  WHERE a.code_hash = ANY(?::text[]) AND a.code_hash = q.hash AND a.client_id = q.client_id AND a.consumed_at IS NULL AND a.expires_at > q.now
    AND (a.redirect_uri IS NULL OR a.redirect_uri = q.redirect_uri) AND a.code_challenge IS NOT DISTINCT FROM q.challenge
    AND (a.dpop_jkt IS NULL OR a.dpop_jkt = q.jkt)
  RETURNING a.*, q.next_hash, q.next_expires, q.next_jkt
), f AS (
  ${FAMILY} SELECT family_id, client_id, user_id, scope, consumed_at, NULL FROM c ON CONFLICT (id) DO NOTHING
), r AS (
  ${NEXT_REFRESH} SELECT next_hash, family_id, client_id, user_id, scope, resources, consumed_at, next_expires, NULL, NULL, next_jkt FROM c WHERE next_hash IS NOT NULL
)
SELECT code_hash, client_id, user_id, redirect_uri, scope, code_challenge, code_challenge_method, nonce, family_id, resources, auth_time, created_at,
  expires_at, consumed_at, dpop_jkt FROM c`);

async function redeemPg(db: Kysely<DB>, rs: CodeRedemption[]): Promise<(AuthorizationCode | undefined)[]> {
  const col = <T>(f: (r: CodeRedemption) => T) => rs.map(f);
  const hashes = col((r) => r.codeHash);
  const { rows } = await run<AuthorizationCodesTable>(db, true, REDEEM_PG, [
    hashes, col((r) => r.clientId), col((r) => r.now), col((r) => r.redirectUri), col((r) => r.challenge), col((r) => r.jkt),
    col((r) => r.refresh?.tokenHash ?? null), col((r) => r.refresh?.expiresAt ?? null), col((r) => r.refresh?.dpopJkt ?? null), hashes,
  ]);
  const byHash = new Map(rows.map((row) => [row.code_hash, row]));
  return rs.map((r) => {
    const row = byHash.get(r.codeHash);
    return row && toCode(row);
  });
}

/** Rotation and redemption for one store: group-committed on the root, one by one inside a caller's transaction. */
export class OneStep {
  private readonly rotations?: GroupCommit<RefreshRotation, RefreshToken | undefined>;
  private readonly redemptions?: GroupCommit<CodeRedemption, AuthorizationCode | undefined>;

  constructor(private readonly db: Kysely<DB>, private readonly postgres: boolean) {
    if (db.isTransaction) return;
    // Steps on one token or code never share a group: a second use must see the first (reuse, replay).
    if (postgres) {
      this.rotations = new GroupCommit((rs) => rotatePg(db, rs), { maxInFlight: 4, key: (r) => r.tokenHash });
      this.redemptions = new GroupCommit((rs) => redeemPg(db, rs), { maxInFlight: 4, key: (r) => r.codeHash });
    } else {
      this.rotations = sqliteGroup(db, rotateSqlite);
      this.redemptions = sqliteGroup(db, redeemSqlite);
    }
  }

  async rotate(r: RefreshRotation): Promise<RefreshToken | undefined> {
    if (this.rotations) return this.rotations.submit(r);
    return this.postgres ? (await rotatePg(this.db, [r]))[0] : rotateSqlite(this.db, r);
  }

  async redeem(r: CodeRedemption): Promise<AuthorizationCode | undefined> {
    if (this.redemptions) return this.redemptions.submit(r);
    return this.postgres ? (await redeemPg(this.db, [r]))[0] : redeemSqlite(this.db, r);
  }
}
