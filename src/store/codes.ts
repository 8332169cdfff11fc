import type { Kysely } from 'kysely';
import type { AuthorizationCode } from '../core/model.js';
import type { CodeStore } from '../core/ports.js';
import type { AuthorizationCodesTable, DB } from './schema.js';
import { joinWords, words } from './codec.js';
import { deleteExpiredBatched, PURGE_BATCH } from './purge.js';

const toCode = (r: AuthorizationCodesTable): AuthorizationCode => ({
  codeHash: r.code_hash, clientId: r.client_id, userId: r.user_id, redirectUri: r.redirect_uri, scope: words(r.scope),
  codeChallenge: r.code_challenge, codeChallengeMethod: r.code_challenge_method as 'S256' | null, nonce: r.nonce,
  familyId: r.family_id, authTime: r.auth_time, createdAt: r.created_at, expiresAt: r.expires_at, consumedAt: r.consumed_at,
  ...(r.resources ? { resources: words(r.resources) } : {}),
  ...(r.dpop_jkt ? { dpopJkt: r.dpop_jkt } : {}),
});

export class SqlCodeStore implements CodeStore {
  constructor(private readonly db: Kysely<DB>) {}

  async save(c: AuthorizationCode): Promise<void> {
    await this.db.insertInto('authorization_codes').values({
      code_hash: c.codeHash, client_id: c.clientId, user_id: c.userId, redirect_uri: c.redirectUri, scope: joinWords(c.scope),
      code_challenge: c.codeChallenge, code_challenge_method: c.codeChallengeMethod, nonce: c.nonce, family_id: c.familyId,
      resources: c.resources?.length ? joinWords(c.resources) : null,
      auth_time: c.authTime, created_at: c.createdAt, expires_at: c.expiresAt, consumed_at: c.consumedAt, dpop_jkt: c.dpopJkt ?? null,
    }).execute();
  }

  async consume(codeHash: string, clientId: string, now: number): Promise<{ code: AuthorizationCode; replay: boolean } | undefined> {
    // One conditional UPDATE: the database decides the single winner, and the
    // client condition in the same statement leaves another client's code alone.
    const won = await this.db.updateTable('authorization_codes').set({ consumed_at: now })
      .where('code_hash', '=', codeHash).where('client_id', '=', clientId).where('consumed_at', 'is', null)
      .returningAll().executeTakeFirst();
    if (won) return { code: toCode(won), replay: false };
    const seen = await this.db.selectFrom('authorization_codes').selectAll()
      .where('code_hash', '=', codeHash).where('client_id', '=', clientId).executeTakeFirst();
    return seen ? { code: toCode(seen), replay: true } : undefined;
  }

  /** In bounded batches (src/store/purge.ts); used codes stay a day past expiry so a late replay still revokes what they issued. */
  async purgeExpired(now: number, batch = PURGE_BATCH): Promise<number> {
    return deleteExpiredBatched(this.db, 'authorization_codes', 'code_hash', now - 86_400_000, batch);
  }
}
