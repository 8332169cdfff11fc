import type { Kysely } from 'kysely';
import type { OpaqueAccessToken, RefreshToken, TokenFamily } from '../core/model.js';
import type { RefreshRotation, TokenStore } from '../core/ports.js';
import type { AccessTokensTable, DB, RefreshTokensTable, TokenFamiliesTable } from './schema.js';
import { joinWords } from './codec.js';
import { deleteExpiredBatched, PURGE_BATCH } from './purge.js';
import { runTransaction } from './transaction.js';
import { isPostgres, run, statement } from './oauth/statements.js';
import { InsertBatcher } from './oauth/insert-batcher.js';
import { LookupCoalescer } from './oauth/lookup-coalescer.js';
import { OneStep } from './oauth/rotation.js';
import { ACCESS_COLUMNS, ACCESS_TYPES, REFRESH_COLUMNS, accessRow, refreshRow, toAccess, toFamily, toRefresh } from './oauth/rows.js';

const Q = {
  createFamily: statement('INSERT INTO token_families (id, client_id, user_id, scope, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?)'),
  getFamily: statement('SELECT * FROM token_families WHERE id = ?'),
  revokeFamily: statement('UPDATE token_families SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
  revokeFamilyRefresh: statement('UPDATE refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL'),
  revokeFamilyAccess: statement('UPDATE access_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL'),
  saveRefresh: statement(`INSERT INTO refresh_tokens (${REFRESH_COLUMNS.join(', ')}) VALUES (${REFRESH_COLUMNS.map(() => '?').join(', ')})`),
  getRefresh: statement('SELECT * FROM refresh_tokens WHERE token_hash = ?'),
  markRotated: statement(
    'UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL RETURNING *',
    // A row another transaction is rotating (or revoking) right now is skipped, not waited for: this
    // use is then a concurrent reuse (RFC 9700 §4.14.2), answered by the caller. Waiting queued every such use
    // on the row while the family's revocation took the same rows, and 20 concurrent uses of one token
    // deadlocked (40P01, a 500). SQLite has one writer at a time and no row locks.
    'UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL AND revoked_at IS NULL '
      + 'AND token_hash IN (SELECT token_hash FROM refresh_tokens WHERE token_hash = ? FOR UPDATE SKIP LOCKED) RETURNING *',
  ),
  saveAccess: statement(`INSERT INTO access_tokens (${ACCESS_COLUMNS.join(', ')}) VALUES (${ACCESS_COLUMNS.map(() => '?').join(', ')})`),
  getAccess: statement('SELECT * FROM access_tokens WHERE token_hash = ?'),
  revokeAccess: statement('UPDATE access_tokens SET revoked_at = ? WHERE token_hash = ? AND revoked_at IS NULL'),
  revokeJti: statement('INSERT INTO revoked_jtis (jti, expires_at) VALUES (?, ?) ON CONFLICT (jti) DO NOTHING'),
  isJtiRevoked: statement('SELECT jti FROM revoked_jtis WHERE jti = ?'),
};

/** The root store's shared helpers: group commit of opaque tokens; on PostgreSQL, coalesced lookups. */
interface Shared {
  access: InsertBatcher;
  lookups?: {
    access: LookupCoalescer<AccessTokensTable>;
    refresh: LookupCoalescer<RefreshTokensTable>;
    family: LookupCoalescer<TokenFamiliesTable>;
    jti: LookupCoalescer<{ jti: string }>;
  };
}

export class SqlTokenStore implements TokenStore {
  private readonly postgres: boolean;
  /** Only outside a transaction: inside one, a write must belong to it and a read must see its writes. */
  private readonly shared: Shared | undefined;
  private readonly oneStep: OneStep;

  constructor(private readonly db: Kysely<DB>) {
    this.postgres = isPostgres(db);
    this.oneStep = new OneStep(db, this.postgres);
    if (!db.isTransaction) {
      this.shared = {
        access: new InsertBatcher(db, this.postgres, 'access_tokens', ACCESS_COLUMNS, ACCESS_TYPES),
        ...(this.postgres ? {
          lookups: {
            access: new LookupCoalescer<AccessTokensTable>(db, 'access_tokens', 'token_hash'),
            refresh: new LookupCoalescer<RefreshTokensTable>(db, 'refresh_tokens', 'token_hash'),
            family: new LookupCoalescer<TokenFamiliesTable>(db, 'token_families', 'id'),
            jti: new LookupCoalescer<{ jti: string }>(db, 'revoked_jtis', 'jti', 'jti'),
          },
        } : {}),
      };
    }
  }

  private async first<R>(q: typeof Q[keyof typeof Q], params: unknown[]): Promise<R | undefined> {
    return (await run<R>(this.db, this.postgres, q, params)).rows[0];
  }

  async createFamily(f: TokenFamily): Promise<void> {
    await run(this.db, this.postgres, Q.createFamily, [f.id, f.clientId, f.userId, joinWords(f.scope), f.createdAt, f.revokedAt]);
  }

  async getFamily(id: string): Promise<TokenFamily | undefined> {
    const r = this.shared?.lookups ? await this.shared.lookups.family.get(id) : await this.first<TokenFamiliesTable>(Q.getFamily, [id]);
    return r && toFamily(r);
  }

  /** Three statements, so atomic through a transaction: the caller's when it has one, else its own. */
  async revokeFamily(id: string, now: number): Promise<void> {
    const revoke = async (db: Kysely<DB>) => {
      await run(db, this.postgres, Q.revokeFamily, [now, id]);
      await run(db, this.postgres, Q.revokeFamilyRefresh, [now, id]);
      await run(db, this.postgres, Q.revokeFamilyAccess, [now, id]);
    };
    if (this.db.isTransaction) await revoke(this.db);
    else await runTransaction(this.db, (trx) => ({ trx }), ({ trx }) => revoke(trx));
  }

  async revokeAllForUser(userId: string, now: number): Promise<number> {
    const revoke = async (db: Kysely<DB>) => {
      // Children first, through the family index (token_families_user), then the families themselves.
      const families = db.selectFrom('token_families').select('id').where('user_id', '=', userId);
      await db.updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', 'in', families).where('revoked_at', 'is', null).execute();
      await db.updateTable('access_tokens').set({ revoked_at: now }).where('family_id', 'in', families).where('revoked_at', 'is', null).execute();
      // The implicit grant's access tokens belong to no family.
      await db.updateTable('access_tokens').set({ revoked_at: now }).where('family_id', 'is', null).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
      const r = await db.updateTable('token_families').set({ revoked_at: now }).where('user_id', '=', userId).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(r.numUpdatedRows);
    };
    if (this.db.isTransaction) return revoke(this.db);
    return runTransaction(this.db, (trx) => ({ trx }), ({ trx }) => revoke(trx));
  }

  async activeFamilies(userId: string, clientId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('token_families').select('id')
      .where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null).execute();
    return rows.map((r) => r.id);
  }

  async saveRefresh(t: RefreshToken): Promise<void> {
    await run(this.db, this.postgres, Q.saveRefresh, refreshRow(t));
  }

  async getRefresh(tokenHash: string): Promise<RefreshToken | undefined> {
    const r = this.shared?.lookups ? await this.shared.lookups.refresh.get(tokenHash) : await this.first<RefreshTokensTable>(Q.getRefresh, [tokenHash]);
    return r && toRefresh(r);
  }

  async markRotated(tokenHash: string, now: number): Promise<{ token: RefreshToken; reuse: boolean } | undefined> {
    const won = await this.first<RefreshTokensTable>(Q.markRotated, this.postgres ? [now, tokenHash, tokenHash] : [now, tokenHash]);
    if (won) return { token: toRefresh(won), reuse: false };
    // Read directly, not coalesced: this follows our own failed write.
    const seen = await this.first<RefreshTokensTable>(Q.getRefresh, [tokenHash]);
    return seen ? { token: toRefresh(seen), reuse: true } : undefined;
  }

  rotateRefresh(req: RefreshRotation): Promise<RefreshToken | undefined> {
    return this.oneStep.rotate(req);
  }

  async saveAccess(t: OpaqueAccessToken): Promise<void> {
    if (this.shared) await this.shared.access.insert(accessRow(t));
    else await run(this.db, this.postgres, Q.saveAccess, accessRow(t));
  }

  async getAccess(tokenHash: string): Promise<OpaqueAccessToken | undefined> {
    const r = this.shared?.lookups ? await this.shared.lookups.access.get(tokenHash) : await this.first<AccessTokensTable>(Q.getAccess, [tokenHash]);
    return r && toAccess(r);
  }

  async revokeAccess(tokenHash: string, now: number): Promise<void> {
    await run(this.db, this.postgres, Q.revokeAccess, [now, tokenHash]);
  }

  async revokeJti(jti: string, expiresAt: number): Promise<void> {
    await run(this.db, this.postgres, Q.revokeJti, [jti, expiresAt]);
  }

  async isJtiRevoked(jti: string): Promise<boolean> {
    const r = this.shared?.lookups ? await this.shared.lookups.jti.get(jti) : await this.first<{ jti: string }>(Q.isJtiRevoked, [jti]);
    return r !== undefined;
  }

  /**
   * Deletes expired access tokens, revoked-JWT entries and refresh tokens in
   * bounded batches (src/store/purge.ts), so requests keep being served while
   * a backlog goes. Codes are the code store's (`CodeStore.purgeExpired`).
   */
  async purgeExpired(now: number, batch = PURGE_BATCH): Promise<number> {
    let n = 0;
    n += await deleteExpiredBatched(this.db, 'access_tokens', 'token_hash', now, batch);
    n += await deleteExpiredBatched(this.db, 'revoked_jtis', 'jti', now, batch);
    n += await deleteExpiredBatched(this.db, 'refresh_tokens', 'token_hash', now, batch);
    return n;
  }
}
