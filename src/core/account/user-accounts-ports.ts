import type { Stores, Transactional, TxHooks } from '../ports.js';

/** One account as operators list it (`gatehouse user list`, GET /admin/users). */
export interface AccountSummary {
  id: string;
  username: string;
  email: string;
  name: string | null;
  createdAt: number;
  admin: boolean;
  lockedAt: number | null;
  /** A link sent to the address was followed, or an administrator said so. */
  emailVerified: boolean;
}

export type ResetVia = 'email' | 'chat';
export type ResetApprovalState = 'waiting' | 'approved' | 'denied' | 'expired';

/**
 * A password reset under way (src/core/account/recovery.ts), stored by the
 * SHA-256 of the token in the e-mailed link or the browser's cookie. A reset
 * for a name that matches no account is stored too (userId null), so both
 * answers do the same work.
 */
export interface PasswordReset {
  userId: string | null;
  via: ResetVia;
  ip: string;
  createdAt: number;
  expiresAt: number;
  /** When a second factor was given for it (a tap in chat, a code): then it may lift a lock. */
  factorAt: number | null;
  /** By chat: number matching as at sign-in (the buttons carry indexes into `choices`). */
  approval: {
    id: string;
    number: number;
    choices: number[];
    chatId: string | null;
    messageId: number | null;
    state: ResetApprovalState;
    expiresAt: number;
  } | null;
}

export interface UserAccountStore {
  /** Ordered by username; `search` matches the start of a username or e-mail address, any case. */
  list(opts: { limit: number; offset: number; search?: string }): Promise<AccountSummary[]>;
  get(userId: string): Promise<AccountSummary | undefined>;
  /** The accounts with this e-mail address (any case), at most `limit`. */
  findByEmail(email: string, limit: number): Promise<{ id: string; username: string }[]>;
  /** False when there is no such user. */
  setPasswordHash(userId: string, hash: string): Promise<boolean>;
  /** Only the fields given; false when there is no such user. */
  updateProfile(userId: string, patch: { name?: string | null; email?: string }): Promise<boolean>;
  /**
   * Removes the account's personal data: the user row, its second factors and
   * pending sign-ins, consents, linked chats and other notification endpoints
   * of the person, chat-link codes, third-party identities, group memberships
   * and elevations, password resets. Token rows stay (revoked) for audit:
   * they hold the user id only. False when there was no such user.
   */
  erase(userId: string): Promise<boolean>;

  putReset(idHash: string, r: PasswordReset): Promise<void>;
  /** The reset (expired or not, used or not: callers check); undefined when absent. */
  getReset(idHash: string): Promise<(PasswordReset & { usedAt: number | null }) | undefined>;
  findResetApproval(approvalId: string): Promise<{ idHash: string; reset: PasswordReset } | undefined>;
  setResetApprovalMessage(approvalId: string, messageId: number): Promise<void>;
  /** Moves a waiting, unexpired approval to `to` (approved also sets factorAt): true for exactly one caller. */
  decideResetApproval(approvalId: string, to: 'approved' | 'denied', now: number): Promise<boolean>;
  /**
   * The one use of a reset: marks it used if it is unused, unexpired, has an
   * account and (by chat) was approved. True for exactly one caller.
   */
  consumeReset(idHash: string, now: number): Promise<boolean>;
  /** Resets past their time: deleted. */
  purgeResets(now: number): Promise<void>;
}

/** What account changes write together, in one transaction (Redis sessions when configured). */
export type UserAccountStores = Pick<Stores, 'users' | 'sessions' | 'tokens' | 'codes' | 'mail' | 'events'> & {
  accounts: UserAccountStore;
} & Partial<TxHooks>;

export type UserAccountTransactions = Transactional<UserAccountStores>;
