import type { Kysely } from 'kysely';
import { APPROVAL_SWEEP_WINDOW_MS, type ApprovalState, type ApprovalTransactions, type ChatApprovalRequest, type MfaStore, type Passkey, type PendingLogin, type TotpFactor } from '../../core/mfa/ports.js';
import type { SecretBox } from '../../core/secret-box.js';
import type { Stores } from '../../core/ports.js';
import type { DB } from '../schema.js';
import { runTransaction, type TxScope } from '../transaction.js';
import { MFA_TOTP_SECRET } from '../secrets/sealed.js';

/* The tables of migration 0012_mfa (src/store/mfa/migration.ts). */
declare module '../schema.js' {
  interface DB {
    mfa_totp: { user_id: string; secret: string; confirmed_at: number | null; last_step: number | null; created_at: number };
    mfa_recovery_codes: { user_id: string; code_hash: string; created_at: number; used_at: number | null };
    mfa_passkeys: {
      id: string; user_id: string; name: string; public_key: string; counter: number; transports: string; created_at: number; last_used_at: number | null;
    };
    mfa_options: {
      user_id: string; chat_approval: number;
      /** Migration 0021_reauth. */
      chat_approval_request: string | null; chat_approval_request_chat: string | null; chat_approval_request_expires_at: number | null;
    };
    mfa_challenges: { id_hash: string; user_id: string | null; challenge: string; expires_at: number };
    mfa_pending: {
      id_hash: string; user_id: string; return_to: string; user_agent: string | null; ip: string; created_at: number; expires_at: number;
      consumed_at: number | null; approval_id: string | null; approval_number: number | null; approval_choices: string | null;
      approval_chat_id: string | null; approval_message_id: number | null; approval_state: string | null; approval_expires_at: number | null;
    };
  }
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const changed = (r: { numUpdatedRows?: bigint; numDeletedRows?: bigint }) => Number(r.numUpdatedRows ?? r.numDeletedRows ?? 0n) > 0;

type PendingRow = DB['mfa_pending'];

function toPending(r: PendingRow): PendingLogin {
  return {
    userId: r.user_id, returnTo: r.return_to, userAgent: r.user_agent, ip: r.ip, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at),
    approval: r.approval_id === null ? null : {
      id: r.approval_id, number: Number(r.approval_number), choices: JSON.parse(r.approval_choices ?? '[]') as number[],
      chatId: r.approval_chat_id ?? '', messageId: num(r.approval_message_id), state: (r.approval_state ?? 'expired') as ApprovalState,
      expiresAt: Number(r.approval_expires_at),
    },
  };
}

function toPasskey(r: DB['mfa_passkeys']): Passkey {
  return {
    id: r.id, userId: r.user_id, name: r.name, publicKey: r.public_key, counter: Number(r.counter),
    transports: r.transports ? r.transports.split(' ') : [], createdAt: Number(r.created_at), lastUsedAt: num(r.last_used_at),
  };
}

/** Second factors on SQLite and PostgreSQL; every single-use step is one conditional statement. */
export class SqlMfaStore implements MfaStore {
  constructor(private readonly db: Kysely<DB>, private readonly box: SecretBox) {}

  async getTotp(userId: string): Promise<TotpFactor | undefined> {
    const r = await this.db.selectFrom('mfa_totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
    if (!r) return undefined;
    return { userId, secret: this.box.open(r.secret, MFA_TOTP_SECRET.aad(userId)), confirmedAt: num(r.confirmed_at), createdAt: Number(r.created_at) };
  }

  async startTotp(userId: string, secret: string, now: number): Promise<boolean> {
    const sealed = this.box.seal(secret, MFA_TOTP_SECRET.aad(userId));
    await this.db.insertInto('mfa_totp').values({ user_id: userId, secret: sealed, confirmed_at: null, last_step: null, created_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret: sealed, last_step: null, created_at: now }).where('mfa_totp.confirmed_at', 'is', null))
      .execute();
    const r = await this.db.selectFrom('mfa_totp').select('secret').where('user_id', '=', userId).executeTakeFirst();
    return r?.secret === sealed;
  }

  async confirmTotp(userId: string, step: number, now: number): Promise<boolean> {
    const r = await this.db.updateTable('mfa_totp').set({ confirmed_at: now, last_step: step })
      .where('user_id', '=', userId).where('confirmed_at', 'is', null)
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)])).executeTakeFirst();
    return changed(r);
  }

  async useTotpStep(userId: string, step: number): Promise<boolean> {
    const r = await this.db.updateTable('mfa_totp').set({ last_step: step })
      .where('user_id', '=', userId).where('confirmed_at', 'is not', null)
      .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)])).executeTakeFirst();
    return changed(r);
  }

  async deleteTotp(userId: string): Promise<boolean> {
    return changed(await this.db.deleteFrom('mfa_totp').where('user_id', '=', userId).executeTakeFirst());
  }

  async setRecoveryCodes(userId: string, hashes: string[], now: number): Promise<void> {
    const replace = async (tx: Kysely<DB>) => {
      await tx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
      await tx.insertInto('mfa_recovery_codes').values(hashes.map((h) => ({ user_id: userId, code_hash: h, created_at: now, used_at: null }))).execute();
    };
    // Within the caller's transaction (the codes and their event, src/core/mfa/factors.ts) or one of its own.
    await (this.db.isTransaction ? replace(this.db) : this.db.transaction().execute(replace));
  }

  async useRecoveryCode(userId: string, hash: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('mfa_recovery_codes').set({ used_at: now })
      .where('user_id', '=', userId).where('code_hash', '=', hash).where('used_at', 'is', null).executeTakeFirst();
    return changed(r);
  }

  async recoveryCodesLeft(userId: string): Promise<number> {
    const r = await this.db.selectFrom('mfa_recovery_codes').select((eb) => eb.fn.countAll().as('n'))
      .where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async deleteRecoveryCodes(userId: string): Promise<number> {
    return Number((await this.db.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).executeTakeFirst()).numDeletedRows);
  }

  async addPasskey(p: Passkey): Promise<void> {
    await this.db.insertInto('mfa_passkeys').values({
      id: p.id, user_id: p.userId, name: p.name, public_key: p.publicKey, counter: p.counter, transports: p.transports.join(' '),
      created_at: p.createdAt, last_used_at: p.lastUsedAt,
    }).execute();
  }

  async listPasskeys(userId: string): Promise<Passkey[]> {
    return (await this.db.selectFrom('mfa_passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').execute()).map(toPasskey);
  }

  async getPasskey(id: string): Promise<Passkey | undefined> {
    const r = await this.db.selectFrom('mfa_passkeys').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toPasskey(r);
  }

  async usePasskey(id: string, counter: number, now: number): Promise<boolean> {
    // Authenticators that keep no counter always say 0 (WebAuthn §6.1.1): then nothing is compared.
    const r = await this.db.updateTable('mfa_passkeys').set({ counter, last_used_at: now }).where('id', '=', id)
      .where((eb) => (counter === 0 ? eb('counter', '=', 0) : eb('counter', '<', counter))).executeTakeFirst();
    return changed(r);
  }

  async deletePasskey(userId: string, id: string): Promise<boolean> {
    return changed(await this.db.deleteFrom('mfa_passkeys').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst());
  }

  async chatApproval(userId: string): Promise<boolean> {
    const r = await this.db.selectFrom('mfa_options').select('chat_approval').where('user_id', '=', userId).executeTakeFirst();
    return Number(r?.chat_approval ?? 0) === 1;
  }

  async setChatApproval(userId: string, on: boolean): Promise<void> {
    const set = { chat_approval: on ? 1 : 0, chat_approval_request: null, chat_approval_request_chat: null, chat_approval_request_expires_at: null };
    await this.db.insertInto('mfa_options').values({ user_id: userId, ...set })
      .onConflict((oc) => oc.column('user_id').doUpdateSet(set)).execute();
  }

  async requestChatApproval(userId: string, r: ChatApprovalRequest): Promise<void> {
    const set = { chat_approval_request: r.id, chat_approval_request_chat: r.chatId, chat_approval_request_expires_at: r.expiresAt };
    await this.db.insertInto('mfa_options').values({ user_id: userId, chat_approval: 0, ...set })
      .onConflict((oc) => oc.column('user_id').doUpdateSet(set)).execute();
  }

  async chatApprovalRequest(id: string): Promise<(ChatApprovalRequest & { userId: string }) | undefined> {
    const r = await this.db.selectFrom('mfa_options').select(['user_id', 'chat_approval_request_chat', 'chat_approval_request_expires_at'])
      .where('chat_approval_request', '=', id).executeTakeFirst();
    return r ? { id, userId: r.user_id, chatId: r.chat_approval_request_chat ?? '', expiresAt: Number(r.chat_approval_request_expires_at) } : undefined;
  }

  async confirmChatApproval(id: string, now: number): Promise<boolean> {
    return changed(await this.db.updateTable('mfa_options')
      .set({ chat_approval: 1, chat_approval_request: null, chat_approval_request_chat: null, chat_approval_request_expires_at: null })
      .where('chat_approval_request', '=', id).where('chat_approval_request_expires_at', '>', now).executeTakeFirst());
  }

  async dropChatApprovalRequest(id: string): Promise<boolean> {
    return changed(await this.db.updateTable('mfa_options')
      .set({ chat_approval_request: null, chat_approval_request_chat: null, chat_approval_request_expires_at: null })
      .where('chat_approval_request', '=', id).executeTakeFirst());
  }

  async putChallenge(idHash: string, c: { userId: string | null; challenge: string; expiresAt: number }): Promise<void> {
    await this.db.insertInto('mfa_challenges').values({ id_hash: idHash, user_id: c.userId, challenge: c.challenge, expires_at: c.expiresAt }).execute();
  }

  async takeChallenge(idHash: string, now: number): Promise<{ userId: string | null; challenge: string } | undefined> {
    const r = await this.db.selectFrom('mfa_challenges').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
    if (!r) return undefined;
    // The delete decides: of two requests with the same cookie, one takes it.
    const gone = await this.db.deleteFrom('mfa_challenges').where('id_hash', '=', idHash).executeTakeFirst();
    if (!changed(gone) || Number(r.expires_at) <= now) return undefined;
    return { userId: r.user_id, challenge: r.challenge };
  }

  async putPending(idHash: string, p: PendingLogin): Promise<void> {
    const a = p.approval;
    await this.db.insertInto('mfa_pending').values({
      id_hash: idHash, user_id: p.userId, return_to: p.returnTo, user_agent: p.userAgent, ip: p.ip, created_at: p.createdAt, expires_at: p.expiresAt,
      consumed_at: null, approval_id: a?.id ?? null, approval_number: a?.number ?? null, approval_choices: a ? JSON.stringify(a.choices) : null,
      approval_chat_id: a?.chatId ?? null, approval_message_id: a?.messageId ?? null, approval_state: a?.state ?? null, approval_expires_at: a?.expiresAt ?? null,
    }).execute();
  }

  async getPending(idHash: string, now: number): Promise<PendingLogin | undefined> {
    const r = await this.db.selectFrom('mfa_pending').selectAll().where('id_hash', '=', idHash)
      .where('consumed_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
    return r && toPending(r);
  }

  async consumePending(idHash: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('mfa_pending').set({ consumed_at: now })
      .where('id_hash', '=', idHash).where('consumed_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
    return changed(r);
  }

  async setApprovalMessage(approvalId: string, messageId: number): Promise<void> {
    await this.db.updateTable('mfa_pending').set({ approval_message_id: messageId }).where('approval_id', '=', approvalId).execute();
  }

  async findApproval(approvalId: string): Promise<{ idHash: string; pending: PendingLogin } | undefined> {
    const r = await this.db.selectFrom('mfa_pending').selectAll().where('approval_id', '=', approvalId).executeTakeFirst();
    return r && { idHash: r.id_hash, pending: toPending(r) };
  }

  async decideApproval(approvalId: string, to: 'approved' | 'denied', now: number): Promise<boolean> {
    const r = await this.db.updateTable('mfa_pending').set({ approval_state: to })
      .where('approval_id', '=', approvalId).where('approval_state', '=', 'waiting').where('approval_expires_at', '>', now).executeTakeFirst();
    return changed(r);
  }

  async expireApproval(approvalId: string, now: number): Promise<boolean> {
    const r = await this.db.updateTable('mfa_pending').set({ approval_state: 'expired' })
      .where('approval_id', '=', approvalId).where('approval_state', '=', 'waiting').where('approval_expires_at', '<=', now).executeTakeFirst();
    return changed(r);
  }

  async approvalsToClose(now: number, limit: number): Promise<PendingLogin[]> {
    // Through the expiry index: a pending login outlives its approval by 3 minutes, so an hour back is every recent one.
    const rows = await this.db.selectFrom('mfa_pending').selectAll()
      .where('expires_at', '>', now - APPROVAL_SWEEP_WINDOW_MS).where('approval_message_id', 'is not', null)
      .where((eb) => eb.or([
        eb('approval_state', '=', 'expired'),
        eb.and([eb('approval_state', '=', 'waiting'), eb('approval_expires_at', '<=', now)]),
      ]))
      .limit(limit).execute();
    return rows.map(toPending);
  }

  async approvalMessageEdited(approvalId: string, messageId: number): Promise<void> {
    await this.db.updateTable('mfa_pending').set({ approval_message_id: null })
      .where('approval_id', '=', approvalId).where('approval_message_id', '=', messageId).execute();
  }

  async purge(now: number): Promise<void> {
    // Kept a day past expiry, so a late press is still told the request expired.
    await this.db.deleteFrom('mfa_pending').where('expires_at', '<', now - 24 * 3600_000).execute();
    await this.db.deleteFrom('mfa_challenges').where('expires_at', '<', now).execute();
  }
}

/** An approval's decision, its event and the lock after "Not me" in one transaction (src/core/mfa/ports.ts). */
export function sqlApprovalTransactions(db: Kysely<DB>, box: SecretBox, storesOn: (trx: Kysely<DB>, scope: TxScope) => Stores): ApprovalTransactions {
  return {
    // The account's lock (src/core/account-lock.ts) writes users, tokens, codes, sessions and the outbox.
    transaction: (fn) => runTransaction(db, (trx, scope) => ({ ...storesOn(trx, scope), mfa: new SqlMfaStore(trx, box) }), fn),
  };
}
