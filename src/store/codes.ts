import type { Kysely } from 'kysely';
import type { AuthorizationCode } from '../core/model.js';
import type { CodeRedemption, CodeStore } from '../core/ports.js';
import type { AuthorizationCodesTable, DB } from './schema.js';
import { joinWords } from './codec.js';
import { deleteExpiredBatched, PURGE_BATCH } from './purge.js';
import { isPostgres, run, statement } from './oauth/statements.js';
import { toCode } from './oauth/rows.js';
import { OneStep } from './oauth/rotation.js';

const Q = {
  save: statement('INSERT INTO authorization_codes (code_hash, client_id, user_id, redirect_uri, scope, code_challenge, code_challenge_method, nonce, '
    + 'family_id, resources, auth_time, created_at, expires_at, consumed_at, dpop_jkt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
  consume: statement('UPDATE authorization_codes SET consumed_at = ? WHERE code_hash = ? AND client_id = ? AND consumed_at IS NULL RETURNING *'),
  seen: statement('SELECT * FROM authorization_codes WHERE code_hash = ? AND client_id = ?'),
};

export class SqlCodeStore implements CodeStore {
  private readonly postgres: boolean;
  private readonly oneStep: OneStep;

  constructor(private readonly db: Kysely<DB>) {
    this.postgres = isPostgres(db);
    this.oneStep = new OneStep(db, this.postgres);
  }

  async save(c: AuthorizationCode): Promise<void> {
    await run(this.db, this.postgres, Q.save, [
      c.codeHash, c.clientId, c.userId, c.redirectUri, joinWords(c.scope), c.codeChallenge, c.codeChallengeMethod, c.nonce, c.familyId,
      c.resources?.length ? joinWords(c.resources) : null, c.authTime, c.createdAt, c.expiresAt, c.consumedAt, c.dpopJkt ?? null,
    ]);
  }

  async consume(codeHash: string, clientId: string, now: number): Promise<{ code: AuthorizationCode; replay: boolean } | undefined> {
    // One conditional UPDATE: the database decides the single winner, and the
    // client condition in the same statement leaves another client's code alone.
    const won = (await run<AuthorizationCodesTable>(this.db, this.postgres, Q.consume, [now, codeHash, clientId])).rows[0];
    if (won) return { code: toCode(won), replay: false };
    const seen = (await run<AuthorizationCodesTable>(this.db, this.postgres, Q.seen, [codeHash, clientId])).rows[0];
    return seen ? { code: toCode(seen), replay: true } : undefined;
  }

  redeem(req: CodeRedemption): Promise<AuthorizationCode | undefined> {
    return this.oneStep.redeem(req);
  }

  async deleteUnusedForUser(userId: string): Promise<number> {
    // Rare (an account lock): no index on user_id, so the hot inserts stay as they are.
    const r = await this.db.deleteFrom('authorization_codes').where('user_id', '=', userId).where('consumed_at', 'is', null).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** In bounded batches (src/store/purge.ts); used codes stay a day past expiry so a late replay still revokes what they issued. */
  async purgeExpired(now: number, batch = PURGE_BATCH): Promise<number> {
    return deleteExpiredBatched(this.db, 'authorization_codes', 'code_hash', now - 86_400_000, batch);
  }
}
