import { randomToken, sha256 } from '../crypto.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailOutbox } from '../mail/ports.js';
import type { User } from '../model.js';
import type { Transactional, UserStore } from '../ports.js';
import { recordEvent, type Recorder } from '../notify/record.js';
import type { EmailVerificationStore } from './verify-email-ports.js';

/** How long a verification link works. */
export const VERIFY_EMAIL_TTL_MS = 24 * 60 * 60 * 1000;
/** Where the link points, under {auth_url} (src/http/auth/verify-email-routes.ts). */
export const VERIFY_EMAIL_PATH = '/account/verify-email';
/** 256 bits of the CSPRNG, base64url. */
const TOKEN_BYTES = 32;
/** Upper bound on what a link's token can be (base64url of 32 bytes is 43 characters). */
const TOKEN_MAX = 128;

export type VerifyStartStores = { emailVerifications: EmailVerificationStore; mail: MailOutbox };

export interface VerifyStarted {
  /** False when e-mail is off (GATEHOUSE_SMTP_URL unset): no link was made, and the page says nothing is e-mailed. */
  sent: boolean;
  expiresAt: number;
}

/**
 * Starts confirming that `email` belongs to `user` (at sign-up, and for every
 * change of address): a single-use link for that exact address, 24 hours,
 * kept only as the SHA-256 of its 256-bit token, and the 'verify-email'
 * message queued in the same transaction (`tx`), so the link exists exactly
 * when its message will be sent. The account's earlier unused link stops
 * working. Nothing about the account changes until the link is followed
 * (`completeEmailVerification`): a new address counts only then.
 */
export async function startEmailVerification(
  mailer: Pick<Mailer, 'enabled' | 'enqueue' | 'site'>,
  tx: VerifyStartStores,
  user: Pick<User, 'id' | 'name'>,
  email: string,
  now: number,
): Promise<VerifyStarted> {
  const expiresAt = now + VERIFY_EMAIL_TTL_MS;
  if (!mailer.enabled) return { sent: false, expiresAt };
  const token = randomToken(TOKEN_BYTES);
  await tx.emailVerifications.replace({ tokenHash: sha256(token), userId: user.id, email, createdAt: now, expiresAt });
  const url = new URL(VERIFY_EMAIL_PATH, mailer.site.url);
  url.searchParams.set('token', token);
  await mailer.enqueue(tx, {
    to: email, template: 'verify-email', userId: user.id,
    data: { url: url.href, expiresMinutes: VERIFY_EMAIL_TTL_MS / 60_000, ...(user.name ? { name: user.name } : {}) },
  });
  return { sent: true, expiresAt };
}

export type VerifyCompleteStores = { emailVerifications: EmailVerificationStore; users: Pick<UserStore, 'get'>; events: Recorder };

export type VerifyOutcome =
  | { ok: true; userId: string; username: string; email: string; changed: boolean }
  | { ok: false };

/**
 * Follows a link, in the caller's transaction: uses the token up (one
 * conditional UPDATE … RETURNING, so a link works once even when followed
 * twice at the same moment), sets the account's address to the one the link
 * was made for and marks it verified, and records `user.email_verified`
 * (and `user.updated` when the address changed). An unknown, used, replaced
 * or expired token changes nothing.
 */
export async function completeEmailVerification(tx: VerifyCompleteStores, token: string, now: number, ip = ''): Promise<VerifyOutcome> {
  if (!token || token.length > TOKEN_MAX) return { ok: false };
  const link = await tx.emailVerifications.consume(sha256(token), now);
  if (!link) return { ok: false };
  const before = await tx.users.get(link.userId);
  if (!before || !(await tx.emailVerifications.setVerifiedEmail(link.userId, link.email))) return { ok: false };
  const changed = before.email !== link.email;
  await recordEvent(tx, 'user.email_verified', { user_id: before.id, username: before.username, email: link.email, ip }, now);
  if (changed) await recordEvent(tx, 'user.updated', { user_id: before.id, username: before.username, fields: ['email'], ip, updated_by: 'self' }, now);
  return { ok: true, userId: before.id, username: before.username, email: link.email, changed };
}

/** A change of address asked for on the account page: the link and its message in one transaction of their own. */
export function requestEmailChange(
  storage: Transactional<VerifyStartStores>, mailer: Pick<Mailer, 'enabled' | 'enqueue' | 'site'>, user: Pick<User, 'id' | 'name'>, email: string, now: number,
): Promise<VerifyStarted> {
  return storage.transaction((tx) => startEmailVerification(mailer, tx, user, email, now));
}

/** A followed link (GET /account/verify-email): used up, and the address changed, in one transaction. */
export function followEmailLink(storage: Transactional<VerifyCompleteStores>, token: string, now: number, ip: string): Promise<VerifyOutcome> {
  return storage.transaction((tx) => completeEmailVerification(tx, token, now, ip));
}
