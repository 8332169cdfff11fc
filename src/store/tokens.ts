import type { Kysely } from 'kysely';
import type { OpaqueAccessToken, RefreshToken, TokenFamily } from '../core/model.js';
import type { TokenStore } from '../core/ports.js';
import type { AccessTokensTable, DB, RefreshTokensTable } from './schema.js';
import { joinWords, words } from './codec.js';

const toRefresh = (r: RefreshTokensTable): RefreshToken => ({
  tokenHash: r.token_hash, familyId: r.family_id, clientId: r.client_id, userId: r.user_id, scope: words(r.scope),
  createdAt: r.created_at, expiresAt: r.expires_at, rotatedAt: r.rotated_at, revokedAt: r.revoked_at,
});

const toAccess = (r: AccessTokensTable): OpaqueAccessToken => ({
  tokenHash: r.token_hash, jti: r.jti, familyId: r.family_id, clientId: r.client_id, userId: r.user_id,
  scope: words(r.scope), createdAt: r.created_at, expiresAt: r.expires_at, revokedAt: r.revoked_at,
  ...(r.cnf_x5t ? { certThumbprint: r.cnf_x5t } : {}),
});

export class SqlTokenStore implements TokenStore {
  constructor(private readonly db: Kysely<DB>) {}

  async createFamily(f: TokenFamily): Promise<void> {
    await this.db.insertInto('token_families').values({
      id: f.id, client_id: f.clientId, user_id: f.userId, scope: joinWords(f.scope), created_at: f.createdAt, revoked_at: f.revokedAt,
    }).execute();
  }

  async getFamily(id: string): Promise<TokenFamily | undefined> {
    const r = await this.db.selectFrom('token_families').selectAll().where('id', '=', id).executeTakeFirst();
    return r && { id: r.id, clientId: r.client_id, userId: r.user_id, scope: words(r.scope), createdAt: r.created_at, revokedAt: r.revoked_at };
  }

  async revokeFamily(id: string, now: number): Promise<void> {
    await this.db.updateTable('token_families').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    await this.db.updateTable('refresh_tokens').set({ revoked_at: now }).where('family_id', '=', id).where('revoked_at', 'is', null).execute();
    await this.db.updateTable('access_tokens').set({ revoked_at: now }).where('family_id', '=', id).where('revoked_at', 'is', null).execute();
  }

  async activeFamilies(userId: string, clientId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('token_families').select('id')
      .where('user_id', '=', userId).where('client_id', '=', clientId).where('revoked_at', 'is', null).execute();
    return rows.map((r) => r.id);
  }

  async saveRefresh(t: RefreshToken): Promise<void> {
    await this.db.insertInto('refresh_tokens').values({
      token_hash: t.tokenHash, family_id: t.familyId, client_id: t.clientId, user_id: t.userId, scope: joinWords(t.scope),
      created_at: t.createdAt, expires_at: t.expiresAt, rotated_at: t.rotatedAt, revoked_at: t.revokedAt,
    }).execute();
  }

  async getRefresh(tokenHash: string): Promise<RefreshToken | undefined> {
    const r = await this.db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return r && toRefresh(r);
  }

  async markRotated(tokenHash: string, now: number): Promise<{ token: RefreshToken; reuse: boolean } | undefined> {
    const won = await this.db.updateTable('refresh_tokens').set({ rotated_at: now })
      .where('token_hash', '=', tokenHash).where('rotated_at', 'is', null).where('revoked_at', 'is', null)
      .returningAll().executeTakeFirst();
    if (won) return { token: toRefresh(won), reuse: false };
    const seen = await this.getRefresh(tokenHash);
    return seen ? { token: seen, reuse: true } : undefined;
  }

  async saveAccess(t: OpaqueAccessToken): Promise<void> {
    await this.db.insertInto('access_tokens').values({
      token_hash: t.tokenHash, jti: t.jti, family_id: t.familyId, client_id: t.clientId, user_id: t.userId,
      scope: joinWords(t.scope), created_at: t.createdAt, expires_at: t.expiresAt, revoked_at: t.revokedAt, cnf_x5t: t.certThumbprint ?? null,
    }).execute();
  }

  async getAccess(tokenHash: string): Promise<OpaqueAccessToken | undefined> {
    const r = await this.db.selectFrom('access_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return r && toAccess(r);
  }

  async revokeAccess(tokenHash: string, now: number): Promise<void> {
    await this.db.updateTable('access_tokens').set({ revoked_at: now }).where('token_hash', '=', tokenHash).where('revoked_at', 'is', null).execute();
  }

  async revokeJti(jti: string, expiresAt: number): Promise<void> {
    await this.db.insertInto('revoked_jtis').values({ jti, expires_at: expiresAt }).onConflict((oc) => oc.column('jti').doNothing()).execute();
  }

  async isJtiRevoked(jti: string): Promise<boolean> {
    return (await this.db.selectFrom('revoked_jtis').select('jti').where('jti', '=', jti).executeTakeFirst()) !== undefined;
  }

  async purgeExpired(now: number): Promise<number> {
    let n = 0;
    const count = (r: { numDeletedRows: bigint }) => (n += Number(r.numDeletedRows));
    count(await this.db.deleteFrom('access_tokens').where('expires_at', '<', now).executeTakeFirst());
    count(await this.db.deleteFrom('revoked_jtis').where('expires_at', '<', now).executeTakeFirst());
    count(await this.db.deleteFrom('refresh_tokens').where('expires_at', '<', now).executeTakeFirst());
    // Used codes are kept a day past expiry so a late replay still revokes what they issued.
    count(await this.db.deleteFrom('authorization_codes').where('expires_at', '<', now - 86_400_000).executeTakeFirst());
    return n;
  }
}
