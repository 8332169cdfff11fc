import type { Kysely } from 'kysely';
import type { Invitation, InvitationStore, SignupTransactions } from '../../core/account/signup-ports.js';
import type { SecretBox } from '../../core/secret-box.js';
import type { DB } from '../schema.js';
import type { NotifyShared } from '../notify/shared.js';
import { SqlEventStore } from '../notify/events.js';
import { SqlMailOutbox } from '../mail/outbox.js';
import { SqlUserStore } from '../users.js';
import { runTransaction } from '../transaction.js';
import { SqlEmailVerificationStore } from './email-verifications.js';

/* The table of migration 0030_signup (src/store/account/signup-migration.ts). */
declare module '../schema.js' {
  interface DB {
    signup_invitations: {
      token_hash: string; email: string; admin: number; invited_by: string; created_at: number; expires_at: number; used_at: number | null; user_id: string | null;
    };
  }
}

const toInvitation = (r: DB['signup_invitations']): Invitation => ({
  tokenHash: r.token_hash, email: r.email, admin: Number(r.admin) === 1, invitedBy: r.invited_by, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at),
});

/** Invitations on SQLite and PostgreSQL: one is used up by one conditional UPDATE. */
export class SqlInvitationStore implements InvitationStore {
  constructor(private readonly db: Kysely<DB>) {}

  async create(inv: Invitation): Promise<void> {
    await this.db.insertInto('signup_invitations').values({
      token_hash: inv.tokenHash, email: inv.email, admin: inv.admin ? 1 : 0, invited_by: inv.invitedBy, created_at: inv.createdAt, expires_at: inv.expiresAt, used_at: null, user_id: null,
    }).execute();
  }

  async find(tokenHash: string, now: number): Promise<Invitation | undefined> {
    const r = await this.db.selectFrom('signup_invitations').selectAll()
      .where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
    return r && toInvitation(r);
  }

  async consume(tokenHash: string, userId: string, now: number): Promise<Invitation | undefined> {
    const r = await this.db.updateTable('signup_invitations').set({ used_at: now, user_id: userId })
      .where('token_hash', '=', tokenHash).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return undefined;
    return toInvitation(await this.db.selectFrom('signup_invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirstOrThrow());
  }

  async grantAdmin(userId: string): Promise<void> {
    await this.db.updateTable('users').set({ is_admin: 1 }).where('id', '=', userId).execute();
  }
}

/** A sign-up's writes in one transaction: the account, the invitation, the event, the verification link and its e-mail. */
export function sqlSignupTransactions(db: Kysely<DB>, notify: NotifyShared, secrets: SecretBox): SignupTransactions {
  return {
    transaction: (fn) => runTransaction(db, (trx, scope) => ({
      users: new SqlUserStore(trx), invitations: new SqlInvitationStore(trx), events: new SqlEventStore(trx, notify, scope), mail: new SqlMailOutbox(trx, notify, secrets, scope),
      emailVerifications: new SqlEmailVerificationStore(trx),
    }), fn),
  };
}
