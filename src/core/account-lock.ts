import type { User } from './model.js';
import type { Stores, TxHooks } from './ports.js';
import { recordEvent, type Recorder } from './notify/record.js';
import { StorageUnavailableError } from './unavailable.js';

/**
 * Locking an account (docs/security.md, "What a lock does"): the one
 * implementation behind every lock — "Not me" on a sign-in approval in chat,
 * "Lock my account" (a one-tap action), the admin console and `gatehouse user
 * lock`. Whoever holds a session or a token of the account is out at once,
 * not only kept from signing in again.
 */
export type LockedBy = 'not_me' | 'one_tap' | 'admin' | 'cli';
export type UnlockedBy = 'admin' | 'cli' | 'password_reset';

/** What a lock writes, all in the caller's transaction. */
export type LockStores = Pick<Stores, 'users' | 'sessions' | 'tokens' | 'codes'> & { events: Recorder } & Partial<TxHooks>;

export interface LockResult {
  userId: string;
  username: string;
  /** Sessions ended (0 when they live in Redis and it could not be reached: refused at use instead). */
  sessionsEnded: number;
  /** Token families revoked, each with its refresh tokens and stored access tokens. */
  familiesRevoked: number;
}

/**
 * In the caller's transaction (`tx`), with whatever else it decides (an
 * approval's "Not me", the event a one-tap button names): marks the account
 * locked, revokes every token family of the account with its refresh tokens
 * and stored (opaque) access tokens, deletes its unused authorization codes,
 * ends every session and records `user.locked`. Undefined, writing nothing,
 * when there is no such user.
 *
 * Sessions in Redis cannot join the SQL transaction: they are deleted here,
 * before the commit (a rollback then only signed someone out), and a Redis
 * that cannot be reached does not stop the lock — session validation refuses
 * every session of a locked account (src/http/auth/session-cookie.ts), and
 * `unlockAccount` deletes them before the account may sign in again. Self-
 * contained (JWT) access tokens cannot be recalled: introspection and `/user`
 * refuse them while the account is locked, and table verification for good
 * (their token family is revoked).
 */
export async function lockAccount(
  tx: LockStores,
  userId: string,
  by: { by: LockedBy; ip?: string | null },
  now: number,
): Promise<LockResult | undefined> {
  const user = await tx.users.get(userId);
  if (!user || !(await tx.users.setLocked(userId, now))) return undefined;
  const familiesRevoked = await tx.tokens.revokeAllForUser(userId, now);
  // A code issued before the lock is never exchanged (the exchange checks the lock too: one issued meanwhile).
  await tx.codes.deleteUnusedForUser(userId);
  const sessionsEnded = await endSessions(tx, userId);
  await recordEvent(tx, 'user.locked', { user_id: userId, username: user.username, ip: by.ip ?? '', locked_by: by.by }, now);
  return { userId, username: user.username, sessionsEnded, familiesRevoked };
}

/**
 * Lets a locked account sign in again: `gatehouse user unlock`, the console,
 * or (issue 26) a password reset that passed its second factor. Every session
 * is deleted first and a failure to do so stops the unlock, so a session that
 * survived the lock (Redis away then) never comes back to life. Records
 * `user.unlocked` in the same transaction as the flag. Undefined when there is
 * no such user; `wasLocked` false when it was not locked (nothing recorded).
 */
export async function unlockAccount(
  storage: { transaction<T>(fn: (tx: Pick<Stores, 'users' | 'sessions' | 'events'>) => Promise<T>): Promise<T> } & Pick<Stores, 'sessions' | 'users'>,
  userId: string,
  by: { by: UnlockedBy; ip?: string | null },
  now: number,
): Promise<{ userId: string; username: string; wasLocked: boolean } | undefined> {
  const before = await storage.users.get(userId);
  if (!before) return undefined;
  // While it is locked no session can be made, so none outlives this.
  if (before.lockedAt != null) await storage.sessions.deleteForUser(userId);
  return storage.transaction(async (tx) => {
    const user = await tx.users.get(userId);
    if (!user) return undefined;
    if (user.lockedAt == null) return { userId, username: user.username, wasLocked: false };
    await tx.users.setLocked(userId, null);
    await recordEvent(tx, 'user.unlocked', { user_id: userId, username: user.username, ip: by.ip ?? '', unlocked_by: by.by }, now);
    return { userId, username: user.username, wasLocked: true };
  });
}

/**
 * Whether the account may use its sessions and tokens: false while it is
 * locked. Given a token (its `iat`, Unix seconds: RFC 7519 §4.1.6), also
 * false when it was issued before the account's latest lock, which an unlock
 * does not bring back: a JWT checked by its signature alone carries nothing
 * else to tell. `iat` has whole seconds, so a token of the lock's own second
 * counts as before it; one without `iat` cannot show it is newer.
 */
export function accountUsable(user: Pick<User, 'lockedAt' | 'tokensValidAfter'> | undefined, token?: { iat: number | undefined }): boolean {
  if (!user || user.lockedAt != null) return false;
  if (!token || user.tokensValidAfter == null) return true;
  return token.iat !== undefined && token.iat * 1000 > user.tokensValidAfter;
}

async function endSessions(tx: Pick<Stores, 'sessions'>, userId: string): Promise<number> {
  try {
    return await tx.sessions.deleteForUser(userId);
  } catch (e) {
    // Redis away: the lock stands all the same (sessions of a locked account are refused on use).
    if (e instanceof StorageUnavailableError && e.store === 'redis') return 0;
    throw e;
  }
}
