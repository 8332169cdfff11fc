import { PostgresAdapter, sql, type Compilable, type CompiledQuery, type Kysely } from 'kysely';
import type { OpaqueAccessToken, RefreshToken, TokenFamily } from '../core/model.js';
import type { TokenStore } from '../core/ports.js';
import type { AccessTokensTable, DB, RefreshTokensTable } from './schema.js';
import { joinWords, words } from './codec.js';
import { deleteExpiredBatched, PURGE_BATCH } from './purge.js';
import { runTransaction } from './transaction.js';


const toRefresh = (r: RefreshTokensTable): RefreshToken => ({
  tokenHash: r.token_hash, familyId: r.family_id, clientId: r.client_id, userId: r.user_id, scope: words(r.scope),
  createdAt: r.created_at, expiresAt: r.expires_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at,
  ...(r.resources ? { resources: words(r.resources) } : {}),
  ...(r.cnf_jkt ? { dpopJkt: r.cnf_jkt } : {}),
});

const toAccess = (r: AccessTokensTable): OpaqueAccessToken => ({
  tokenHash: r.token_hash, jti: r.jti, familyId: r.family_id, clientId: r.client_id, userId: r.user_id,
  scope: words(r.scope), createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at,
  ...(r.cnf_x5t ? { certThumbprint: r.cnf_x5t } : {}),
  ...(r.audience ? { audience: words(r.audience) } : {}),
  ...(r.act ? { act: JSON.parse(r.act) as Record<string, unknown> } : {}),
  ...(r.cnf_jkt ? { dpopJkt: r.cnf_jkt } : {}),
});

export class SqlTokenStore implements TokenStore {
  constructor(private readonly db: Kysely<DB>) {}

  /** The lookups on the introspection and refresh paths, compiled once per store (SQL text and parameter order). */
  private readonly compiled = new Map<string, CompiledQuery<unknown>>();

  /**
   * Runs a one-parameter lookup through its compiled form: building and
   * compiling a kysely query costs more than SQLite's answer to it. `build`
   * is called once, with a placeholder in the parameter's place.
   */
  private async first<R>(name: string, build: () => Compilable<R>, param: string): Promise<R | undefined> {
    let q = this.compiled.get(name) as CompiledQuery<R> | undefined;
    if (!q) {
      q = build().compile();
      this.compiled.set(name, q);
    }
    return (await this.db.executeQuery<R>({ ...q, parameters: [param] })).rows[0];
  }

  async createFamily(f: TokenFamily): Promise<void> {
    await this.db.insertInto('token_families').values({
      id: f.id, client_id: f.clientId, user_id: f.userId, scope: joinWords(f.scope), created_at: f.createdAt, revoked_at: f.revokedAt,
    }).execute();
  }

  async getFamily(id: string): Promise<TokenFamily | undefined> {
    const r = await this.first('getFamily', () => this.db.selectFrom('token_families').selectAll().where('id', '=', ''), id);
    return r && { id: r.id, clientId: r.client_id, userId: r.user_id, scope: words(r.scope), createdAt: r.created_at, revokedAt: r.revoked_at };
  }

  /** Three statements, so atomic through a transaction: the caller's when it has one, else its own. */
  async revokeFamily(id: string, now: number): Promise<void> {
    const revoke = async (db: Kysely<DB>) => {
      await db.updateTable('token_families').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
      await db.updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', '=', id).where('revoked_at', 'is', null).execute();
      await db.updateTable('access_tokens').set({ revoked_at: now }).where('family_id', '=', id).where('revoked_at', 'is', null).execute();
    };
    if (this.db.isTransaction) await revoke(this.db);
    else await runTransaction(this.db, (trx) => ({ trx }), ({ trx }) => revoke(trx));
  }

  async activeFamilies(userId: string, clientId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('token_families').select('id')
      .where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null).execute();
    return rows.map((r) => r.id);
  }

  async saveRefresh(t: RefreshToken): Promise<void> {
    await this.db.insertInto('refresh_tokens').values({
      token_hash: t.tokenHash, family_id: t.familyId, client_id: t.clientId, user_id: t.userId, scope: joinWords(t.scope),
      resources: t.resources?.length ? joinWords(t.resources) : null,
      created_at: t.createdAt, expires_at: t.expiresAt, rotated_at: t.rotatedAt, revoked_at: t.revokedAt, cnf_jkt: t.dpopJkt ?? null,
    }).execute();
  }

  async getRefresh(tokenHash: string): Promise<RefreshToken | undefined> {
    const r = await this.first('getRefresh', () => this.db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', ''), tokenHash);
    return r && toRefresh(r);
  }

  async markRotated(tokenHash: string, now: number): Promise<{ token: RefreshToken; reuse: boolean } | undefined> {
    let rotate = this.db.updateTable('refresh_tokens').set({ rotated_at: now })
      .where('token_hash', '=', tokenHash).where('rotated_at', 'is', null).where('revoked_at', 'is', null);
    if (this.db.getExecutor().adapter instanceof PostgresAdapter) {
      // A row another transaction is rotating (or revoking) right now is skipped, not waited for: this
      // use is then a concurrent reuse (RFC 9700 §4.14.2), answered below. Waiting queued every such use
      // on the row while the family's revocation took the same rows, and 20 concurrent uses of one token
      // deadlocked (40P01, a 500). SQLite has one writer at a time and no row locks.
      rotate = rotate.where('token_hash', 'in', (eb) => eb.selectFrom('refresh_tokens').select('token_hash')
        .where('token_hash', '=', tokenHash).modifyEnd(sql`for update skip locked`));
    }
    const won = await rotate.returningAll().executeTakeFirst();
    if (won) return { token: toRefresh(won), reuse: false };
    const seen = await this.getRefresh(tokenHash);
    return seen ? { token: seen, reuse: true } : undefined;
  }

  async saveAccess(t: OpaqueAccessToken): Promise<void> {
    await this.db.insertInto('access_tokens').values({
      token_hash: t.tokenHash, jti: t.jti, family_id: t.familyId, client_id: t.clientId, user_id: t.userId,
      audience: t.audience?.length ? joinWords(t.audience) : null, act: t.act ? JSON.stringify(t.act) : null,
      scope: joinWords(t.scope), created_at: t.createdAt, expires_at: t.expiresAt, revoked_at: t.revokedAt, cnf_x5t: t.certThumbprint ?? null,
      cnf_jkt: t.dpopJkt ?? null,
    }).execute();
  }

  async getAccess(tokenHash: string): Promise<OpaqueAccessToken | undefined> {
    const r = await this.first('getAccess', () => this.db.selectFrom('access_tokens').selectAll().where('token_hash', '=', ''), tokenHash);
    return r && toAccess(r);
  }

  async revokeAccess(tokenHash: string, now: number): Promise<void> {
    await this.db.updateTable('access_tokens').set({ revoked_at: now }).where('token_hash', '=', tokenHash).where('revoked_at', 'is', null).execute();
  }

  async revokeJti(jti: string, expiresAt: number): Promise<void> {
    await this.db.insertInto('revoked_jtis').values({ jti, expires_at: expiresAt }).onConflict((oc) => oc.column('jti').doNothing()).execute();
  }

  async isJtiRevoked(jti: string): Promise<boolean> {
    return (await this.first('isJtiRevoked', () => this.db.selectFrom('revoked_jtis').select('jti').where('jti', '=', ''), jti)) !== undefined;
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
