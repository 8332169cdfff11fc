import type { Kysely } from 'kysely';
import type { Session } from '../core/model.js';
import type { SessionStore } from '../core/ports.js';
import { decodeAmr, encodeAmr } from '../core/oidc/acr.js';
import type { DB, SessionsTable } from './schema.js';

declare module './schema.js' {
  /** Migration 0016_session_use. */
  interface SessionsTable {
    ip: string | null;
    last_used_at: number | null;
    /** Migration 0021_reauth. */
    verified_at: number | null;
    /** Migration 0033_auth_levels: RFC 8176 methods, space-separated. */
    amr: string | null;
  }
}

const toSession = (r: SessionsTable): Session => ({
  idHash: r.id_hash, userId: r.user_id, authTime: r.auth_time, createdAt: r.created_at, expiresAt: r.expires_at,
  // Sessions from before 0004_oidc have neither; before their first use, no ip and no last use.
  ...(r.sid !== null ? { sid: r.sid } : {}),
  ...(r.user_agent !== null ? { userAgent: r.user_agent } : {}),
  ...(r.ip !== null ? { ip: r.ip } : {}),
  ...(r.last_used_at !== null ? { lastUsedAt: Number(r.last_used_at) } : {}),
  ...(r.verified_at !== null && r.verified_at !== undefined ? { verifiedAt: Number(r.verified_at) } : {}),
  ...(r.amr ? { amr: decodeAmr(r.amr)! } : {}),
});

export class SqlSessionStore implements SessionStore {
  constructor(private readonly db: Kysely<DB>) {}

  async create(s: Session): Promise<void> {
    await this.db.insertInto('sessions').values({
      id_hash: s.idHash, user_id: s.userId, auth_time: s.authTime, created_at: s.createdAt, expires_at: s.expiresAt,
      sid: s.sid ?? null, user_agent: s.userAgent ?? null, ip: s.ip ?? null, last_used_at: s.lastUsedAt ?? null,
      verified_at: s.verifiedAt ?? null, amr: encodeAmr(s.amr),
    }).execute();
  }

  async get(idHash: string, now: number): Promise<Session | undefined> {
    const r = await this.db.selectFrom('sessions').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
    return r && toSession(r);
  }

  async listForUser(userId: string, now: number): Promise<Session[]> {
    const rows = await this.db.selectFrom('sessions').selectAll().where('user_id', '=', userId).where('expires_at', '>', now)
      .orderBy('created_at', 'desc').execute();
    return rows.map(toSession);
  }

  async delete(idHash: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
  }

  async deleteForUser(userId: string): Promise<number> {
    const r = await this.db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async markVerified(idHash: string, at: number): Promise<boolean> {
    // Only forward: a slower request proving earlier does not shorten the window.
    const r = await this.db.updateTable('sessions').set({ verified_at: at })
      .where('id_hash', '=', idHash)
      .where((w) => w.or([w('verified_at', 'is', null), w('verified_at', '<', at)]))
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) > 0) return true;
    return (await this.db.selectFrom('sessions').select('id_hash').where('id_hash', '=', idHash).executeTakeFirst()) !== undefined;
  }

  async touch(idHash: string, use: { at: number; ip: string | null }, notBefore: number): Promise<boolean> {
    const r = await this.db.updateTable('sessions').set({ last_used_at: use.at, ip: use.ip })
      .where('id_hash', '=', idHash)
      .where((w) => w.or([w('last_used_at', 'is', null), w('last_used_at', '<', notBefore)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }
}
