import { randomUUID } from 'node:crypto';
import { randomToken, sha256 } from '../crypto.js';
import { GatehouseError, invalidRequest } from '../errors.js';
import type { Mailer } from '../mail/mailer.js';
import { isMailAddress } from '../mail/mailer.js';
import type { User } from '../model.js';
import type { Clock, PasswordHasher, RateLimitStore, UserStore } from '../ports.js';
import { recordEvent } from '../notify/record.js';
import { checkPassword, MAX_PASSWORD_LENGTH } from './password-policy.js';
import type { Invitation, InvitationStore, SignupTransactions } from './signup-ports.js';
import { startEmailVerification } from './verify-email.js';

export type SignupMode = 'off' | 'invite' | 'open';

/** Usernames as `gatehouse user create` takes them (src/core/admin.ts). */
const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const DEFAULT_INVITATION_TTL_SECONDS = 7 * 86_400;
/** Sign-ups per address and window (counted before the account is written, so parallel requests cannot pass the limit). */
export const SIGNUPS_PER_ADDRESS = 5;
const SIGNUP_WINDOW_MS = 60 * 60_000;

export interface SignupDeps {
  transactions: SignupTransactions;
  invitations: InvitationStore;
  users: UserStore;
  limits: RateLimitStore;
  hasher: PasswordHasher;
  clock: Clock;
  mailer: Mailer;
  mode: SignupMode;
  authUrl: () => string;
}

/** A refusal the sign-up page shows beside the form (400, 409, 429). */
export class SignupRefused extends GatehouseError {
  constructor(status: 400 | 403 | 409 | 429, readonly field: 'username' | 'email' | 'password' | 'invitation' | 'form', message: string, retryAfterSeconds?: number) {
    super(status === 429 ? 'slow_down' : 'invalid_request', message, { status, ...(retryAfterSeconds ? { retryAfterSeconds } : {}) });
    this.name = 'SignupRefused';
  }
}

export interface SignupInput {
  username: string;
  email: string;
  password: string;
  /** The invitation link's token (required with `invite`). */
  invitation?: string | undefined;
  address: string;
}

/**
 * Sign-up (`GATEHOUSE_SIGNUP`) and invitations. The account, the invitation
 * it uses up, its `user.created` event, the verification link and its e-mail
 * are written in one transaction: an invitation used twice at once makes one
 * account, and a refused sign-up writes nothing.
 */
export class Signup {
  constructor(private readonly deps: SignupDeps) {}

  get mode(): SignupMode {
    return this.deps.mode;
  }

  /** `gatehouse user invite`, the console: the link (its token appears nowhere else), and an e-mail with it when SMTP is set. */
  async invite(input: { email: string; admin?: boolean; ttlSeconds?: number; invitedBy: string }): Promise<{ url: string; expiresAt: number; emailed: boolean }> {
    const email = input.email.trim();
    if (!isMailAddress(email)) throw invalidRequest('email is not a valid address');
    const ttl = input.ttlSeconds ?? DEFAULT_INVITATION_TTL_SECONDS;
    if (!Number.isInteger(ttl) || ttl < 60 || ttl > 90 * 86_400) throw invalidRequest('ttl must be 60 to 7776000 seconds');
    const token = randomToken();
    const now = this.deps.clock.now();
    const inv: Invitation = { tokenHash: sha256(token), email, admin: input.admin === true, invitedBy: input.invitedBy, createdAt: now, expiresAt: now + ttl * 1000 };
    const url = `${this.deps.authUrl()}/signup?invitation=${token}`;
    const emailed = await this.deps.transactions.transaction(async (tx) => {
      await tx.invitations.create(inv);
      return (await this.deps.mailer.enqueue(tx, { to: email, template: 'invitation', data: { url, expiresAt: inv.expiresAt, invitedBy: input.invitedBy } })) !== undefined;
    });
    return { url, expiresAt: inv.expiresAt, emailed };
  }

  /** The unused, unexpired invitation a link names (the page pre-fills its address). */
  async invitation(token: string | undefined): Promise<Invitation | undefined> {
    if (!token || token.length > 128) return undefined;
    return this.deps.invitations.find(sha256(token), this.deps.clock.now());
  }

  /** Checks the form, counts the attempt for its address, then writes everything in one transaction. */
  async signUp(input: SignupInput): Promise<User> {
    const { deps } = this;
    if (deps.mode === 'off') throw new SignupRefused(403, 'form', 'Sign-up is off on this server.');
    const username = input.username.trim();
    const email = input.email.trim();
    if (!USERNAME.test(username)) throw new SignupRefused(400, 'username', 'Choose a username of 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit.');
    if (!isMailAddress(email)) throw new SignupRefused(400, 'email', 'Enter your e-mail address.');
    const verdict = input.password.length > MAX_PASSWORD_LENGTH * 4 ? checkPassword('x'.repeat(MAX_PASSWORD_LENGTH + 1)) : checkPassword(input.password, { username, email });
    if (!verdict.ok) throw new SignupRefused(400, 'password', verdict.message);
    const invitationHash = input.invitation ? sha256(input.invitation.slice(0, 128)) : undefined;
    if (deps.mode === 'invite' && !invitationHash) throw new SignupRefused(403, 'invitation', 'Sign-up on this server is by invitation only.');
    const now = deps.clock.now();
    const [count] = await deps.limits.hitAll([`signup:addr:${input.address}`], SIGNUP_WINDOW_MS, now);
    if (count!.count > SIGNUPS_PER_ADDRESS) {
      throw new SignupRefused(429, 'form', 'Too many sign-ups from your network. Try again later.', Math.max(1, Math.ceil((count!.resetAt - now) / 1000)));
    }
    // Checked again by the unique index in the transaction; this spares a password hash.
    if (await deps.users.findByUsername(username)) throw taken();
    const user: User = { id: randomUUID(), username, email, name: null, passwordHash: await deps.hasher.hash(input.password), createdAt: now };
    try {
      return await deps.transactions.transaction(async (tx) => {
        let via: 'signup' | 'invitation' = 'signup';
        await tx.users.create(user);
        if (invitationHash) {
          const inv = await tx.invitations.consume(invitationHash, user.id, now);
          if (!inv) throw new SignupRefused(403, 'invitation', 'This invitation link was used already or has expired. Ask for a new one.');
          if (inv.admin) await tx.invitations.grantAdmin(user.id);
          via = 'invitation';
          // The invitation's link went to that address: following it proved the address.
          if (inv.email.toLowerCase() === email.toLowerCase()) await tx.emailVerifications.setVerified(user.id, true);
        }
        await recordEvent(tx, 'user.created', { user_id: user.id, username, created_by: via }, now);
        // Otherwise a link that verifies the address (issue 26 item 3), e-mailed with the commit.
        if (via === 'signup' || (await tx.users.get(user.id))?.emailVerified !== true) await startEmailVerification(deps.mailer, tx, user, email, now);
        return user;
      });
    } catch (e) {
      if (e instanceof Error && e.name === 'UsernameTakenError') throw taken();
      throw e;
    }
  }
}

const taken = () => new SignupRefused(409, 'username', 'This username is taken. Choose another one.');
