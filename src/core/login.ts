import { randomToken } from './crypto.js';
import type { User } from './model.js';
import type { Clock, PasswordHasher, RateLimitStore, UserStore } from './ports.js';
import { CredentialThrottle } from './throttle.js';
import type { EventStore } from './notify/ports.js';
import { recordEvent } from './notify/record.js';

export interface LoginPolicy {
  /** Failed attempts on one username before it is locked for the rest of the window. */
  maxFailuresPerAccount: number;
  /** Failed attempts from one address before it is locked for the rest of the window. */
  maxFailuresPerAddress: number;
  windowMs: number;
}

export const defaultLoginPolicy: LoginPolicy = { maxFailuresPerAccount: 5, maxFailuresPerAddress: 20, windowMs: 15 * 60_000 };

export type LoginOutcome =
  /** secondFactor: the password was right, but the account has a second factor: no sign-in until it passes (src/core/mfa). */
  | { ok: true; user: User; secondFactor?: boolean }
  | { ok: false; reason: 'invalid'; lockedNow: boolean }
  /** `busy`: refused only because other attempts for the account are being checked right now; retry in a second. */
  | { ok: false; reason: 'locked'; retryAfterSeconds: number; busy?: true }
  /** The password was right, but an administrator locked the account (admin console). */
  | { ok: false; reason: 'disabled' };

/** Accounts an administrator locked (src/core/console/ports.ts). */
export interface AccountLocks {
  isLocked(userId: string): Promise<boolean>;
}

/**
 * Password checks for the login page and the password grant, rate-limited per
 * account and per address (RFC 6819 §4.4.3.6, §5.1.4.2.3). An attempt is
 * counted before its password is checked (src/core/throttle.ts), so however
 * many arrive at once, from however many processes, at most the limit are
 * verified and the right password is refused while locked. The counters key
 * on the username as typed, whether or not such an account exists, and
 * unknown users cost one argon2 verify too, so neither the lockout nor the
 * timing tells an attacker which accounts exist.
 */
export class LoginGuard {
  private dummyHash: Promise<string> | undefined;
  private readonly throttle: CredentialThrottle;

  constructor(
    private readonly users: UserStore,
    limits: RateLimitStore,
    private readonly hasher: PasswordHasher,
    private readonly clock: Clock,
    /** user.login.succeeded, user.login.failed and user.locked go to the outbox. */
    private readonly events: EventStore,
    readonly policy: LoginPolicy = defaultLoginPolicy,
    /** Checked only after the right password, so a lock does not tell strangers an account exists. */
    private readonly locks?: AccountLocks,
    /** Whether an account has a second factor (src/core/mfa/factors.ts). */
    private readonly secondFactor?: (userId: string) => Promise<boolean>,
  ) {
    this.throttle = new CredentialThrottle(limits, clock, {
      kind: 'login', perCredential: policy.maxFailuresPerAccount, perAddress: policy.maxFailuresPerAddress, windowMs: policy.windowMs, inFlight: true,
    });
  }

  /**
   * `opts.session`: the caller starts a session on success and records
   * user.login.succeeded with its sid (src/core/oidc/sso.ts); the password
   * grant, which starts none, leaves it to this method.
   */
  async attempt(username: string, password: string, address: string, opts: { session?: boolean } = {}): Promise<LoginOutcome> {
    const now = this.clock.now();
    const name = username.toLowerCase();
    // As typed (it may not name an account); bounded so the log cannot be flooded with large values.
    const typed = username.slice(0, 64);
    const stores = { events: this.events };
    const gate = await this.throttle.admit(name, address);
    if (!gate.allowed) {
      await recordEvent(stores, 'user.login.failed', { user_id: null, username: typed, ip: address, reason: 'locked' }, now);
      return { ok: false, reason: 'locked', retryAfterSeconds: gate.retryAfterSeconds, ...(gate.busy ? { busy: true as const } : {}) };
    }
    let user: User | undefined;
    let valid: boolean;
    try {
      user = await this.users.findByUsername(username);
      this.dummyHash ??= this.hasher.hash(randomToken());
      valid = user ? await this.hasher.verify(user.passwordHash, password) : (await this.hasher.verify(await this.dummyHash, password), false);
    } catch (e) {
      // No answer about the password was given: the attempt is not a failure.
      await this.throttle.abandoned(name, address).catch(() => undefined);
      throw e;
    }
    if (valid && user) {
      await this.throttle.succeeded(name, address);
      if (await this.locks?.isLocked(user.id)) {
        await recordEvent(stores, 'user.login.failed', { user_id: user.id, username: typed, ip: address, reason: 'locked' }, now);
        return { ok: false, reason: 'disabled' };
      }
      // Recorded once the second step passes (src/core/mfa/second-step.ts).
      if (await this.secondFactor?.(user.id)) return { ok: true, user, secondFactor: true };
      if (!opts.session) await recordEvent(stores, 'user.login.succeeded', { user_id: user.id, username: user.username, ip: address, sid: null }, now);
      return { ok: true, user };
    }
    await this.throttle.failedAdmitted(name, address);
    const who = { user_id: user?.id ?? null, username: typed, ip: address };
    await recordEvent(stores, 'user.login.failed', { ...who, reason: 'invalid_credentials' }, now);
    // This failure was the last the limits allowed: the account or the address is locked from now on.
    if (gate.lockedBy) await recordEvent(stores, 'user.locked', { ...who, locked_by: gate.lockedBy === 'credential' ? 'account' : 'address' }, now);
    return { ok: false, reason: 'invalid', lockedNow: Boolean(gate.lockedBy) };
  }
}
