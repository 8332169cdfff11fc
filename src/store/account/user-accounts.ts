import { sql, type Kysely } from 'kysely';
import type {
  AccountSummary, PasswordReset, ResetApprovalState, ResetVia, UserAccountStore, UserAccountTransactions,
} from '../../core/account/user-accounts-ports.js';
import type { Stores } from '../../core/ports.js';
import type { DB } from '../schema.js';
import { runTransaction, type TxScope } from '../transaction.js';

/* The table of migration 0031_password_resets (src/store/account/password-resets-migration.ts). */
declare module '../schema.js' {
  interface DB {
    password_resets: {
      id_hash: string; user_id: string | null; via: string; ip: string; created_at: number; expires_at: number; used_at: number | null;
      factor_at: number | null; approval_id: string | null; approval_number: number | null; approval_choices: string | null;
      approval_chat_id: string | null; approval_message_id: number | null; approval_state: string | null; approval_expires_at: number | null;
    };
  }
}

type ResetRow = DB['password_resets'];
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const changed = (r: { numUpdatedRows?: bigint; numDeletedRows?: bigint }) => Number(r.numUpdatedRows ?? r.numDeletedRows ?? 0n) > 0;

/**
 * The tables that hold a person's data by `user_id` and go with the account
 * (issue 26, item 5). Token rows, sign-in records and the outbox stay: they
 * name the user id only (revoked first), which audit needs. Notification
 * endpoints are deleted through their own store (src/core/account/user-accounts.ts).
 */
const PERSONAL_TABLES = [
  'mfa_totp', 'mfa_recovery_codes', 'mfa_passkeys', 'mfa_options', 'mfa_challenges', 'mfa_pending',
  'consents', 'notify_link_codes', 'external_identities', 'access_group_members', 'access_elevations', 'password_resets', 'email_verifications',
] as const;

const toReset = (r: ResetRow): PasswordReset & { usedAt: number | null } => ({
  userId: r.user_id, via: r.via as ResetVia, ip: r.ip, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at),
  factorAt: num(r.factor_at), usedAt: num(r.used_at),
  approval: r.approval_id === null ? null : {
    id: r.approval_id, number: Number(r.approval_number), choices: JSON.parse(r.approval_choices ?? '[]') as number[],
    chatId: r.approval_chat_id, messageId: num(r.approval_message_id), state: (r.approval_state ?? 'expired') as ResetApprovalState,
    expiresAt: Number(r.approval_expires_at),
  },
});

const toSummary = (r: DB['users']): AccountSummary => ({
  id: r.id, username: r.username, email: r.email, name: r.name, createdAt: Number(r.created_at), admin: Number(r.is_admin ?? 0) === 1, lockedAt: num(r.locked_at),
  emailVerified: Number((r as { email_verified?: unknown }).email_verified ?? 0) === 1,
});

export class SqlUserAccountStore implements UserAccountStore {
  constructor(private readonly db: Kysely<DB>) {}

  async get(userId: string): Promise<AccountSummary | undefined> {
    const r = await this.db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
    return r && toSummary(r);
  }

  async list(opts: { limit: number; offset: number; search?: string }): Promise<AccountSummary[]> {
    // All columns: email_verified (migration 0030_signup) is read where it exists.
    let q = this.db.selectFrom('users').selectAll();
    if (opts.search) {
      // LIKE's own wildcards in the search are taken literally.
      const prefix = `${opts.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      q = q.where((eb) => eb.or([
        eb('username_lower', 'like', sql<string>`${prefix} escape '\\'`),
        eb(sql`lower(email)`, 'like', sql<string>`${prefix} escape '\\'`),
      ]));
    }
    const rows = await q.orderBy('username_lower').limit(opts.limit).offset(opts.offset).execute();
    return rows.map(toSummary);
  }

  async findByEmail(email: string, limit: number): Promise<{ id: string; username: string }[]> {
    return this.db.selectFrom('users').select(['id', 'username']).where(sql`lower(email)`, '=', email.toLowerCase()).orderBy('created_at').limit(limit).execute();
  }

  async setPasswordHash(userId: string, hash: string): Promise<boolean> {
    return changed(await this.db.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).executeTakeFirst());
  }

  async updateProfile(userId: string, patch: { name?: string | null; email?: string }): Promise<boolean> {
    const set: { name?: string | null; email?: string; email_verified?: number } = {};
    if (patch.name !== undefined) set.name = patch.name;
    // An address set without its link being followed is not verified (src/core/account/verify-email.ts).
    if (patch.email !== undefined) Object.assign(set, { email: patch.email, email_verified: 0 });
    if (!Object.keys(set).length) return (await this.db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined;
    return changed(await this.db.updateTable('users').set(set).where('id', '=', userId).executeTakeFirst());
  }

  async erase(userId: string): Promise<boolean> {
    for (const table of PERSONAL_TABLES) await sql`delete from ${sql.table(table)} where user_id = ${userId}`.execute(this.db);
    return changed(await this.db.deleteFrom('users').where('id', '=', userId).executeTakeFirst());
  }

  async putReset(idHash: string, r: PasswordReset): Promise<void> {
    const a = r.approval;
    await this.db.insertInto('password_resets').values({
      id_hash: idHash, user_id: r.userId, via: r.via, ip: r.ip, created_at: r.createdAt, expires_at: r.expiresAt, used_at: null, factor_at: r.factorAt,
      approval_id: a?.id ?? null, approval_number: a?.number ?? null, approval_choices: a ? JSON.stringify(a.choices) : null,
      approval_chat_id: a?.chatId ?? null, approval_message_id: a?.messageId ?? null, approval_state: a?.state ?? null, approval_expires_at: a?.expiresAt ?? null,
    }).execute();
  }

  async getReset(idHash: string): Promise<(PasswordReset & { usedAt: number | null }) | undefined> {
    const r = await this.db.selectFrom('password_resets').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
    return r && toReset(r);
  }

  async findResetApproval(approvalId: string): Promise<{ idHash: string; reset: PasswordReset } | undefined> {
    const r = await this.db.selectFrom('password_resets').selectAll().where('approval_id', '=', approvalId).executeTakeFirst();
    return r && { idHash: r.id_hash, reset: toReset(r) };
  }

  async setResetApprovalMessage(approvalId: string, messageId: number): Promise<void> {
    await this.db.updateTable('password_resets').set({ approval_message_id: messageId }).where('approval_id', '=', approvalId).execute();
  }

  async decideResetApproval(approvalId: string, to: 'approved' | 'denied', now: number): Promise<boolean> {
    return changed(await this.db.updateTable('password_resets')
      .set(to === 'approved' ? { approval_state: to, factor_at: now } : { approval_state: to })
      .where('approval_id', '=', approvalId).where('approval_state', '=', 'waiting').where('approval_expires_at', '>', now).where('used_at', 'is', null)
      .executeTakeFirst());
  }

  async consumeReset(idHash: string, now: number): Promise<boolean> {
    return changed(await this.db.updateTable('password_resets').set({ used_at: now })
      .where('id_hash', '=', idHash).where('used_at', 'is', null).where('expires_at', '>', now).where('user_id', 'is not', null)
      .where((eb) => eb.or([eb('via', '=', 'email'), eb('approval_state', '=', 'approved')]))
      .executeTakeFirst());
  }

  async purgeResets(now: number): Promise<void> {
    await this.db.deleteFrom('password_resets').where('expires_at', '<=', now - 3600_000).execute();
  }
}

/** Account changes with the core stores on one transaction: `storesOn` builds those (src/store/index.ts). */
export function sqlUserAccountTransactions(db: Kysely<DB>, storesOn: (trx: Kysely<DB>, scope: TxScope) => Stores): UserAccountTransactions {
  return { transaction: (fn) => runTransaction(db, (trx, scope) => ({ ...storesOn(trx, scope), accounts: new SqlUserAccountStore(trx) }), fn) };
}
