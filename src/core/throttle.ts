import { sha256 } from './crypto.js';
import type { Clock, RateCount, RateLimitStore } from './ports.js';

/** How many failed attempts one credential id and one address may make in a fixed window. */
export interface ThrottlePolicy {
  /** Names the counters: `<kind>:acct:<credential id>` and `<kind>:addr:<address>`. */
  kind: string;
  perCredential: number;
  perAddress: number;
  windowMs: number;
  /**
   * Also count the attempts being checked right now (`<kind>:busy:acct:<id>`,
   * `<kind>:busy:addr:<address>`), so
   * a refusal caused only by attempts in flight, not by failures, says so
   * and asks for a retry in a second rather than at the window's end.
   */
  inFlight?: boolean;
}

const FIFTEEN_MINUTES = 15 * 60_000;

/** Client secrets at every client-authenticated endpoint (src/core/oauth/client-auth.ts). */
export const CLIENT_SECRET_POLICY: ThrottlePolicy = { kind: 'client', perCredential: 5, perAddress: 20, windowMs: FIFTEEN_MINUTES };

/** The admin API's bearer token: one credential, so one id (src/http/auth/admin-routes.ts). */
export const ADMIN_TOKEN_POLICY: ThrottlePolicy = { kind: 'admin', perCredential: 5, perAddress: 20, windowMs: FIFTEEN_MINUTES };

export type LockedBy = 'credential' | 'address';

export interface Verdict {
  /** False: answer 429 (or the endpoint's "locked") without evaluating the credential. */
  allowed: boolean;
  /** Seconds until the counter that refused starts a new window; 0 when allowed. For `Retry-After`. */
  retryAfterSeconds: number;
  /** The limit that refused; or, when allowed, the limit this attempt reaches if it fails (it locks now). */
  lockedBy?: LockedBy;
  /**
   * Refused only because other attempts for the credential are being checked
   * right now (policies with `inFlight`): it clears as soon as they finish, so
   * `retryAfterSeconds` is BUSY_RETRY_SECONDS, not the window's end.
   */
  busy?: true;
}

/** Retry-After for a refusal caused by attempts in flight: they take about one password hash each. */
export const BUSY_RETRY_SECONDS = 1;

/** Ids as typed by a caller can be long; the key stays short and indexable. */
const idPart = (id: string) => (id.length > 128 ? `sha256:${sha256(id)}` : id);

/**
 * Brute-force throttling of one kind of credential, per credential id and per
 * address (RFC 6819 §4.4.3.6, §5.1.4.2.3), atomic across processes because
 * every decision is taken on the count the store's own increment returned.
 * Counters key on the id as presented, whether or not it names anything, so
 * the lock does not tell which ids exist.
 *
 * Expensive checks (argon2): count the attempt *before* checking it, so no more
 * than the limit are ever evaluated, however many arrive at once:
 *
 *     const gate = await throttle.admit(id, address);
 *     if (!gate.allowed) → 429, Retry-After: gate.retryAfterSeconds
 *     if (await verify()) await throttle.succeeded(id, address);   // verify threw: throttle.abandoned(id, address)
 *     else if (gate.lockedBy) → this failure locked it (an event)
 *
 * Cheap checks (a SHA-256 compare): nothing is written on success, so the hot
 * path costs one read:
 *
 *     const gate = await throttle.check(id, address);       // read, with the credential lookup
 *     if (!gate.allowed) → 429
 *     if (!matches) { const f = await throttle.failed(id, address); → f.allowed ? 401 : 429 }
 *
 * A new credential kind: `new CredentialThrottle(storage.rateLimits, clock,
 * { kind: 'bot', perCredential: 5, perAddress: 20, windowMs: 15 * 60_000 })`,
 * one instance per process, the id being whatever names the credential (a
 * bot id, a client_id; a single secret uses one fixed id). Count only
 * requests that presented a credential: a request with none guesses nothing.
 */
export class CredentialThrottle {
  constructor(
    private readonly store: RateLimitStore,
    private readonly clock: Clock,
    readonly policy: ThrottlePolicy,
  ) {}

  private keys(id: string, address: string): [string, string] {
    return [`${this.policy.kind}:acct:${idPart(id)}`, `${this.policy.kind}:addr:${address}`];
  }

  /** With `inFlight`, the attempts being checked right now, per credential and per address. */
  private busyKeys(id: string, address: string): string[] {
    return this.policy.inFlight ? [`${this.policy.kind}:busy:acct:${idPart(id)}`, `${this.policy.kind}:busy:addr:${address}`] : [];
  }

  /** The counters an admitted attempt holds until it ends: with `inFlight`, the busy counters too. */
  private held(id: string, address: string): string[] {
    return [...this.keys(id, address), ...this.busyKeys(id, address)];
  }

  /**
   * Counts an attempt before its credential is checked; refused once either
   * count is over its limit, so at most the limit are admitted per window.
   * A refused attempt takes its own count back: the counters hold failures
   * and attempts in flight only, so a burst of sign-ins from one shared
   * address is refused while it lasts rather than locking the address for
   * the rest of the window. Call `succeeded` when the credential was right,
   * `abandoned` when the check could not be made.
   */
  async admit(id: string, address: string): Promise<Verdict> {
    const now = this.clock.now();
    const [acct, addr, busyAcct, busyAddr] = await this.store.hitAll(this.held(id, address), this.policy.windowMs, now);
    let verdict = this.judge(acct!, addr!, now, 'admit');
    // Failures alone (the attempts in flight, this one included, taken out) reach neither limit: only a burst is refused.
    if (!verdict.allowed && busyAcct && busyAddr && acct!.count - busyAcct.count < this.policy.perCredential
      && addr!.count - busyAddr.count < this.policy.perAddress) {
      verdict = { allowed: false, retryAfterSeconds: BUSY_RETRY_SECONDS, ...(verdict.lockedBy ? { lockedBy: verdict.lockedBy } : {}), busy: true };
    }
    if (!verdict.allowed) await this.abandoned(id, address);
    return verdict;
  }

  /** An admitted attempt that got no answer (the check failed to run): neither a failure nor a success. */
  async abandoned(id: string, address: string): Promise<void> {
    const now = this.clock.now();
    await Promise.all(this.held(id, address).map((k) => this.store.unhit(k, now)));
  }

  /** An admitted attempt that failed: its failure stays counted, it is no longer in flight (policies with `inFlight`). */
  async failedAdmitted(id: string, address: string): Promise<void> {
    const now = this.clock.now();
    await Promise.all(this.busyKeys(id, address).map((k) => this.store.unhit(k, now)));
  }

  /**
   * After an admitted attempt succeeded: the credential's failures are
   * forgiven (its owner proved they know it). The address gets back only
   * this attempt's own count, so it keeps counting failures alone: many
   * people signing in from one shared address do not lock it, and an
   * attacker with one valid account of their own cannot clear their failures
   * by signing in to it between guesses.
   */
  async succeeded(id: string, address: string): Promise<void> {
    const [acctKey, addrKey] = this.keys(id, address);
    const now = this.clock.now();
    await Promise.all([this.store.reset(acctKey), ...[addrKey, ...this.busyKeys(id, address)].map((k) => this.store.unhit(k, now))]);
  }

  /** Before a cheap check, with nothing written: refused while either count of failures is at its limit. */
  async check(id: string, address: string): Promise<Verdict> {
    const [acct, addr] = await this.read(this.keys(id, address));
    return this.judge(acct!, addr!, this.clock.now(), 'check');
  }

  /** Reads of the same counters asked for in this turn of the event loop, not yet started. */
  private readonly reads = new Map<string, Promise<RateCount[]>>();

  /**
   * Checks of the same counters made in one turn of the event loop (a busy
   * client's requests parsed together) share one read, started once that turn
   * is over: after every caller sharing it arrived, so each still sees every
   * lock committed before its request, as with a read of its own. A busy client
   * then costs about one read per turn rather than one per request.
   */
  private read(keys: readonly string[]): Promise<RateCount[]> {
    const id = keys.join('\n');
    let read = this.reads.get(id);
    if (!read) {
      read = new Promise<RateCount[]>((resolve, reject) => {
        setImmediate(() => {
          this.reads.delete(id);
          this.store.peekAll(keys, this.clock.now()).then(resolve, reject);
        });
      });
      this.reads.set(id, read);
    }
    return read;
  }

  /**
   * Counts a failed cheap check. Not allowed: the limit was already reached
   * (by this failure's own count), so answer as locked rather than as a plain
   * failure; then the right and the wrong credential get the same answer.
   */
  async failed(id: string, address: string): Promise<Verdict> {
    const now = this.clock.now();
    const [acct, addr] = await this.store.hitAll(this.keys(id, address), this.policy.windowMs, now);
    return this.judge(acct!, addr!, now, 'admit');
  }

  /**
   * `admit`: the count includes this attempt, so up to the limit passes.
   * `check`: the counts are earlier failures, so reaching the limit locks.
   */
  private judge(acct: RateCount, addr: RateCount, now: number, mode: 'admit' | 'check'): Verdict {
    const over = (c: RateCount, limit: number) => (mode === 'admit' ? c.count > limit : c.count >= limit);
    const refusing: RateCount[] = [];
    let lockedBy: LockedBy | undefined;
    if (over(acct, this.policy.perCredential)) {
      refusing.push(acct);
      lockedBy = 'credential';
    }
    if (over(addr, this.policy.perAddress)) {
      refusing.push(addr);
      lockedBy ??= 'address';
    }
    if (refusing.length) {
      const until = Math.max(...refusing.map((c) => c.resetAt));
      // Another process may have opened the window a little after this one read its clock: never past one window.
      const seconds = Math.min(Math.ceil((until - now) / 1000), Math.ceil(this.policy.windowMs / 1000));
      return { allowed: false, retryAfterSeconds: Math.max(1, seconds), lockedBy };
    }
    if (mode === 'admit') {
      if (acct.count === this.policy.perCredential) lockedBy = 'credential';
      else if (addr.count === this.policy.perAddress) lockedBy = 'address';
    }
    return { allowed: true, retryAfterSeconds: 0, ...(lockedBy ? { lockedBy } : {}) };
  }
}
