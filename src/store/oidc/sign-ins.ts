import type { Kysely } from 'kysely';
import type { SignIn, SignInStore } from '../../core/oidc/ports.js';
import type { DB, SsoSignInsTable } from '../schema.js';
import { decodeAmr, encodeAmr } from '../../core/oidc/acr.js';

declare module '../schema.js' {
  /** Migration 0033_auth_levels. */
  interface SsoSignInsTable {
    amr: string | null;
  }
}

const toSignIn = (r: SsoSignInsTable): SignIn => ({
  familyId: r.family_id, sid: r.sid, clientId: r.client_id, userId: r.user_id, authTime: r.auth_time,
  createdAt: r.created_at, endedAt: r.ended_at, claims: r.claims,
  ...(r.amr ? { amr: decodeAmr(r.amr)! } : {}),
});

export class SqlSignInStore implements SignInStore {
  constructor(private readonly db: Kysely<DB>) {}

  async record(s: SignIn): Promise<void> {
    await this.db.insertInto('sso_sign_ins').values({
      family_id: s.familyId, sid: s.sid, client_id: s.clientId, user_id: s.userId, auth_time: s.authTime,
      created_at: s.createdAt, ended_at: s.endedAt, claims: s.claims ?? null, amr: encodeAmr(s.amr),
    }).execute();
  }

  async byFamily(familyId: string): Promise<SignIn | undefined> {
    const r = await this.db.selectFrom('sso_sign_ins').selectAll().where('family_id', '=', familyId).executeTakeFirst();
    return r && toSignIn(r);
  }

  async forSession(sid: string): Promise<SignIn[]> {
    const rows = await this.db.selectFrom('sso_sign_ins').selectAll().where('sid', '=', sid).where('ended_at', 'is', null)
      .orderBy('created_at').execute();
    return rows.map(toSignIn);
  }

  async endSession(sid: string, now: number): Promise<SignIn[]> {
    // One conditional UPDATE … RETURNING: of two concurrent sign-outs, each row goes to exactly one.
    const rows = await this.db.updateTable('sso_sign_ins').set({ ended_at: now })
      .where('sid', '=', sid).where('ended_at', 'is', null).returningAll().execute();
    return rows.map(toSignIn);
  }

  async purge(before: number): Promise<number> {
    const r = await this.db.deleteFrom('sso_sign_ins').where('created_at', '<', before).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
