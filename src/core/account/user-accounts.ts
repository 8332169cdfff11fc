import { StorageUnavailableError } from '../unavailable.js';
import { invalidRequest, notFound } from '../errors.js';
import { isMailAddress, type Mailer } from '../mail/mailer.js';
import type { Session } from '../model.js';
import type { PasswordHasher } from '../ports.js';
import { recordEvent } from '../notify/record.js';
import { checkPassword } from './password-policy.js';
import type { UserAccountStores } from './user-accounts-ports.js';

/**
 * Who made a change, for the event: the person on the account page (`self`),
 * a password reset (`reset`), an administrator in the console (`admin`) or
 * the admin API (`api`), or `gatehouse user …` (`cli`).
 */
export type ChangedBy = 'self' | 'reset' | 'admin' | 'api' | 'cli';
export interface By { by: ChangedBy; ip?: string | null }

/** A new password already checked and hashed (`UserAccounts.prepare`), so the hash need not run inside a transaction. */
export interface PreparedPassword { readonly hash: string }

export interface PasswordChanged {
  userId: string;
  username: string;
  /** Sessions ended. */
  sessionsEnded: number;
  /** Token families revoked, each with its refresh tokens and stored access tokens. */
  familiesRevoked: number;
}

export interface AccountDeleted {
  userId: string;
  username: string;
  familiesRevoked: number;
}

export interface UserAccountDeps {
  hasher: PasswordHasher;
  mailer: Pick<Mailer, 'enqueue' | 'enabled'>;
  /**
   * OpenID Connect Back-Channel Logout 1.0 for one ended session (the
   * console's lock does the same: SingleSignOn.signOut). Run after the commit.
   */
  signedOut?(session: Session): Promise<unknown>;
}

const NAME_MAX = 200;
// Names are one line: no control characters (C0, DEL, C1), which would forge lines in e-mails and pages.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A person's account over its life (issue 26): a new password, an
 * administrator's change of name or e-mail, deletion. Each runs in the
 * caller's transaction (`tx`), so its effects, its event and its e-mail commit
 * together; the account page (src/http/pages/account.ts), the password reset
 * (recovery.ts), the console, the admin API and the command line all call
 * these, so each rule is written once.
 */
export class UserAccounts {
  constructor(private readonly deps: UserAccountDeps) {}

  /** The mailer its notices go through (recovery e-mails its links through the same). */
  get mailer(): UserAccountDeps['mailer'] {
    return this.deps.mailer;
  }

  /** The password policy (password-policy.ts) and the hash, outside any transaction. Throws invalid_request with the policy's message. */
  async prepare(newPassword: string, account: { username?: string; email?: string } = {}): Promise<PreparedPassword> {
    if (typeof newPassword !== 'string') throw invalidRequest('password is required');
    const verdict = checkPassword(newPassword, account);
    if (!verdict.ok) throw invalidRequest(verdict.message);
    return { hash: await this.deps.hasher.hash(newPassword) };
  }

  /**
   * Sets a new password: checked by the policy and hashed (argon2), then in
   * `tx` every session ended and every token family of the account revoked
   * with its refresh and stored access tokens (as a lock does, without
   * locking), unused codes deleted, `user.password_changed` recorded (the
   * linked chat shows it) and a security notice e-mailed. notFound when there
   * is no such user. A string is checked and hashed here; prefer `prepare`
   * first and pass its result, so the hash runs outside the transaction.
   */
  async setPassword(tx: UserAccountStores, userId: string, newPassword: string | PreparedPassword, by: By, now: number): Promise<PasswordChanged> {
    const user = await tx.users.get(userId);
    if (!user) throw notFound('unknown user');
    const { hash } = typeof newPassword === 'string' ? await this.prepare(newPassword, user) : newPassword;
    if (!(await tx.accounts.setPasswordHash(userId, hash))) throw notFound('unknown user');
    const familiesRevoked = await tx.tokens.revokeAllForUser(userId, now);
    await tx.codes.deleteUnusedForUser(userId);
    const sessions = await listSessions(tx, userId, now);
    // Not forgiven when Redis is away (unlike a lock, nothing else refuses these sessions): the change fails and can be retried.
    const sessionsEnded = await tx.sessions.deleteForUser(userId);
    this.tellApps(tx, sessions);
    await recordEvent(tx, 'user.password_changed', { user_id: userId, username: user.username, ip: by.ip ?? '', changed_by: by.by }, now);
    await this.notice(tx, user, 'password_changed', now);
    return { userId, username: user.username, sessionsEnded, familiesRevoked };
  }

  /**
   * Deletes the account: every token family revoked, codes deleted, every
   * session ended (the applications told by back-channel logout after the
   * commit), the person's notification endpoints (linked chats) deleted, and
   * the personal data erased (UserAccountStore.erase). `user.deleted` carries
   * the id and username only; a last notice goes to the address. notFound
   * when there is no such user.
   */
  async deleteAccount(tx: UserAccountStores, userId: string, by: By, now: number): Promise<AccountDeleted> {
    const user = await tx.users.get(userId);
    if (!user) throw notFound('unknown user');
    const familiesRevoked = await tx.tokens.revokeAllForUser(userId, now);
    await tx.codes.deleteUnusedForUser(userId);
    const sessions = await listSessions(tx, userId, now);
    await endSessions(tx, userId);
    for (const e of await tx.events.endpoints.list({ userId })) await tx.events.endpoints.delete(e.id);
    await this.notice(tx, user, 'account_deleted', now);
    if (!(await tx.accounts.erase(userId))) throw notFound('unknown user');
    await recordEvent(tx, 'user.deleted', { user_id: userId, username: user.username, ip: by.ip ?? '', deleted_by: by.by }, now);
    this.tellApps(tx, sessions);
    return { userId, username: user.username, familiesRevoked };
  }

  /**
   * An administrator's change of name or e-mail (the person's own goes
   * through the account page, whose new address counts once its link is
   * followed). Records `user.updated` with the fields that changed; a changed
   * address is told at the old one. notFound when there is no such user.
   */
  async updateUser(tx: UserAccountStores, userId: string, patch: { name?: string | null; email?: string }, by: By, now: number): Promise<{ userId: string; username: string; fields: ('name' | 'email')[] }> {
    const user = await tx.users.get(userId);
    if (!user) throw notFound('unknown user');
    const next: { name?: string | null; email?: string } = {};
    if (patch.name !== undefined) {
      const name = patch.name === null ? null : patch.name.trim() || null;
      if (name !== null && (name.length > NAME_MAX || CONTROL.test(name))) throw invalidRequest(`name: one line of at most ${NAME_MAX} characters`);
      if (name !== user.name) next.name = name;
    }
    if (patch.email !== undefined) {
      const email = patch.email.trim();
      if (!isMailAddress(email)) throw invalidRequest('email is not a valid address');
      if (email !== user.email) next.email = email;
    }
    const fields = Object.keys(next) as ('name' | 'email')[];
    if (!fields.length) return { userId, username: user.username, fields };
    if (!(await tx.accounts.updateProfile(userId, next))) throw notFound('unknown user');
    await recordEvent(tx, 'user.updated', { user_id: userId, username: user.username, fields, ip: by.ip ?? '', updated_by: by.by }, now);
    if (next.email !== undefined) await this.notice(tx, user, 'email_changed', now);
    return { userId, username: user.username, fields };
  }

  /** Back-channel logout (OpenID Connect Back-Channel Logout 1.0) of the ended sessions, once the change has committed. */
  private tellApps(tx: UserAccountStores, sessions: Session[]): void {
    const { signedOut } = this.deps;
    if (!signedOut || !sessions.length) return;
    const tell = async () => {
      for (const s of sessions) await signedOut(s).catch(() => undefined);
    };
    if (tx.afterCommit) tx.afterCommit(tell);
    else void tell();
  }

  private async notice(tx: UserAccountStores, user: { id: string; email: string; name: string | null }, notice: 'password_changed' | 'account_deleted' | 'email_changed', now: number): Promise<void> {
    // An address the mailer refuses (an old account's) must not stop the change itself.
    if (!this.deps.mailer.enabled || !isMailAddress(user.email)) return;
    await this.deps.mailer.enqueue(tx, { to: user.email, template: 'security-notice', data: { notice, at: now, ...(user.name ? { name: user.name } : {}) }, userId: user.id });
  }
}

async function listSessions(tx: Pick<UserAccountStores, 'sessions'>, userId: string, now: number): Promise<Session[]> {
  try {
    return await tx.sessions.listForUser(userId, now);
  } catch (e) {
    if (e instanceof StorageUnavailableError && e.store === 'redis') return [];
    throw e;
  }
}

async function endSessions(tx: Pick<UserAccountStores, 'sessions'>, userId: string): Promise<number> {
  try {
    return await tx.sessions.deleteForUser(userId);
  } catch (e) {
    // Redis away: the deletion stands; a session whose user is gone is refused on use.
    if (e instanceof StorageUnavailableError && e.store === 'redis') return 0;
    throw e;
  }
}
