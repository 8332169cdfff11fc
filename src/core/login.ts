import { randomToken } from './crypto.js';
import type { User } from './model.js';
import type { Clock, PasswordHasher, RateLimitStore, UserStore } from './ports.js';
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
  | { ok: true; user: User }
  | { ok: false; reason: 'invalid' | 'locked'; lockedNow?: boolean };

/**
 * Password checks for the login page and the password grant, rate-limited per
 * account and per address (RFC 6819 §4.4.3.6, §5.1.4.2.3). The counters key on
 * the username as typed, whether or not such an account exists, and unknown
 * users cost one argon2 verify too, so neither the lockout nor the timing tells
 * an attacker which accounts exist.
 */
export class LoginGuard {
  private dummyHash: Promise<string> | undefined;

  constructor(
    private readonly users: UserStore,
    private readonly limits: RateLimitStore,
    private readonly hasher: PasswordHasher,
    private readonly clock: Clock,
    /** user.login.succeeded, user.login.failed and user.locked go to the outbox. */
    private readonly events: EventStore,
    readonly policy: LoginPolicy = defaultLoginPolicy,
  ) {}

  async attempt(username: string, password: string, address: string): Promise<LoginOutcome> {
    const now = this.clock.now();
    const accountKey = `login:acct:${username.toLowerCase()}`;
    const addressKey = `login:addr:${address}`;
    const [acct, addr] = await Promise.all([this.limits.peek(accountKey, now), this.limits.peek(addressKey, now)]);
    // As typed (it may not name an account); bounded so the log cannot be flooded with large values.
    const typed = username.slice(0, 64);
    const stores = { events: this.events };
    if (acct >= this.policy.maxFailuresPerAccount || addr >= this.policy.maxFailuresPerAddress) {
      await recordEvent(stores, 'user.login.failed', { user_id: null, username: typed, ip: address, reason: 'locked' }, now);
      return { ok: false, reason: 'locked' };
    }
    const user = await this.users.findByUsername(username);
    this.dummyHash ??= this.hasher.hash(randomToken());
    const valid = user ? await this.hasher.verify(user.passwordHash, password) : (await this.hasher.verify(await this.dummyHash, password), false);
    if (valid && user) {
      await this.limits.reset(accountKey);
      await recordEvent(stores, 'user.login.succeeded', { user_id: user.id, username: user.username, ip: address }, now);
      return { ok: true, user };
    }
    const [acctCount, addrCount] = await Promise.all([
      this.limits.hit(accountKey, this.policy.windowMs, now),
      this.limits.hit(addressKey, this.policy.windowMs, now),
    ]);
    const lockedNow = acctCount === this.policy.maxFailuresPerAccount || addrCount === this.policy.maxFailuresPerAddress;
    const who = { user_id: user?.id ?? null, username: typed, ip: address };
    await recordEvent(stores, 'user.login.failed', { ...who, reason: 'invalid_credentials' }, now);
    if (lockedNow) {
      await recordEvent(stores, 'user.locked', { ...who, locked_by: acctCount === this.policy.maxFailuresPerAccount ? 'account' : 'address' }, now);
    }
    return { ok: false, reason: 'invalid', lockedNow };
  }
}
