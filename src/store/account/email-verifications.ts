import type { Kysely } from 'kysely';
import type { EmailVerification, EmailVerificationStore } from '../../core/account/verify-email-ports.js';
import type { DB } from '../schema.js';

/* What migration 0032_email_verification adds (src/store/account/email-verification-migration.ts). */
declare module '../schema.js' {
  interface UsersTable {
    email_verified: number;
  }
  interface DB {
    email_verifications: { token_hash: string; user_id: string; email: string; created_at: number; expires_at: number; used_at: number | null };
  }
}

type LinkRow = DB['email_verifications'];

const toLink = (r: LinkRow): EmailVerification => ({
  tokenHash: r.token_hash, userId: r.user_id, email: r.email, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at),
});

export class SqlEmailVerificationStore implements EmailVerificationStore {
  constructor(private readonly db: Kysely<DB>) {}

  async replace(v: EmailVerification): Promise<void> {
    // Callers run this in a transaction (src/core/account/verify-email.ts): the account's older links end as this one is made.
    await this.db.updateTable('email_verifications').set({ used_at: v.createdAt })
      .where('user_id', '=', v.userId).where('used_at', 'is', null).execute();
    await this.db.insertInto('email_verifications').values({
      token_hash: v.tokenHash, user_id: v.userId, email: v.email, created_at: v.createdAt, expires_at: v.expiresAt, used_at: null,
    }).execute();
  }

  async consume(tokenHash: string, now: number): Promise<EmailVerification | undefined> {
    // One conditional UPDATE … RETURNING (SQLite 3.35+, PostgreSQL): two concurrent uses, one winner.
    const r = await this.db.updateTable('email_verifications').set({ used_at: now })
      .where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now)
      .returningAll().executeTakeFirst();
    return r && toLink(r);
  }

  async setVerifiedEmail(userId: string, email: string): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ email, email_verified: 1 }).where('id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async setVerified(userId: string, verified: boolean): Promise<boolean> {
    const r = await this.db.updateTable('users').set({ email_verified: verified ? 1 : 0 }).where('id', '=', userId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async deleteForUser(userId: string): Promise<number> {
    const r = await this.db.deleteFrom('email_verifications').where('user_id', '=', userId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async deleteExpired(now: number): Promise<number> {
    const r = await this.db.deleteFrom('email_verifications').where('expires_at', '<=', now).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
