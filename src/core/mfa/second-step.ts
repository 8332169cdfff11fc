import { randomToken, sha256 } from '../crypto.js';
import type { User } from '../model.js';
import type { Clock, UserStore } from '../ports.js';
import type { EventStore } from '../notify/ports.js';
import type { Wakeups } from '../bot/wakeups.js';
import { ChatApproval, approvalTopic } from './approval.js';
import type { SecondFactors } from './factors.js';
import type { MfaStore, PendingLogin } from './ports.js';
import { waitForTap } from './wait-for-tap.js';

/** How long the second-step page may wait: a few minutes to open an app or find a recovery code. */
export const PENDING_TTL_MS = 5 * 60_000;

export type StepOutcome =
  /** ip: the address the sign-in began from, for user.login.succeeded (recorded with the session, src/core/oidc/sso.ts). */
  /** method: how the second step was passed (RFC 8176: `otp` a TOTP or recovery code, `mca` a tap in the linked chat). */
  | { ok: true; user: User; returnTo: string; ip: string; method: 'otp' | 'mca' }
  | { ok: false; reason: 'expired' | 'invalid' | 'denied' | 'disabled' | 'waiting' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number };

export interface SecondStepDeps {
  store: MfaStore;
  factors: SecondFactors;
  approval: ChatApproval;
  users: UserStore;
  events: EventStore;
  clock: Clock;
  wakeups: Wakeups;
  isLocked(userId: string): Promise<boolean>;
}

/**
 * The sign-in between the right password and the second factor. No session
 * exists yet: a pending login, stored by the hash of a random token kept in a
 * browser cookie, lives 5 minutes and ends once (one conditional UPDATE), by a
 * code or by the chat approval it may carry.
 */
export class SecondStep {
  constructor(private readonly deps: SecondStepDeps) {}

  /** Starts the second step: the cookie's token, and the number to show when approval in chat was sent. */
  async begin(user: User, opts: { returnTo: string; userAgent: string | null; ip: string; browser: string }): Promise<{ token: string }> {
    const { store, clock, approval } = this.deps;
    const now = clock.now();
    const token = randomToken();
    const pending: PendingLogin = {
      userId: user.id, returnTo: opts.returnTo, userAgent: opts.userAgent, ip: opts.ip, createdAt: now, expiresAt: now + PENDING_TTL_MS,
      approval: await approval.prepare(user.id, now),
    };
    await store.putPending(sha256(token), pending);
    await approval.send(pending, opts.browser);
    return { token };
  }

  async get(token: string | undefined): Promise<PendingLogin | undefined> {
    if (!token || token.length > 128) return undefined;
    const now = this.deps.clock.now();
    const p = await this.deps.store.getPending(sha256(token), now);
    if (p?.approval) {
      await this.deps.approval.expireIfDue(p, now);
      if (p.approval.state === 'waiting' && p.approval.expiresAt <= now) p.approval.state = 'expired';
    }
    return p;
  }

  /** The form's `code`: a TOTP code or a recovery code, counted by the limiter when wrong. */
  async withCode(token: string | undefined, code: string, ip: string): Promise<StepOutcome> {
    const p = await this.get(token);
    if (!p) return { ok: false, reason: 'expired' };
    if (p.approval?.state === 'denied') return { ok: false, reason: 'denied' };
    const check = await this.deps.factors.checkCode(p.userId, code, ip);
    if (!check.ok) return check;
    return this.finish(token!, p, 'otp');
  }

  /** After the right number was tapped in chat. */
  async approved(token: string | undefined): Promise<StepOutcome> {
    const p = await this.get(token);
    if (!p) return { ok: false, reason: 'expired' };
    const state = p.approval?.state;
    if (state === 'denied') return { ok: false, reason: 'denied' };
    if (state !== 'approved') return { ok: false, reason: state === 'waiting' ? 'waiting' : 'expired' };
    return this.finish(token!, p, 'mca');
  }

  private async finish(token: string, p: PendingLogin, method: 'otp' | 'mca'): Promise<StepOutcome> {
    const { store, clock, users } = this.deps;
    const now = clock.now();
    if (!(await store.consumePending(sha256(token), now))) return { ok: false, reason: 'expired' };
    const user = await users.get(p.userId);
    if (!user) return { ok: false, reason: 'expired' };
    // "Not me" in chat (or an administrator) locked it meanwhile.
    if (await this.deps.isLocked(user.id)) return { ok: false, reason: 'disabled' };
    return { ok: true, user, returnTo: p.returnTo, ip: p.ip, method };
  }

  /**
   * Waits up to `ms` for the approval to leave `waiting` (the long poll of
   * the second-step page): woken by the press in this process at once, and
   * re-reading storage every 250 ms for a press another process handled.
   */
  async wait(token: string | undefined, ms: number, signal: AbortSignal): Promise<string> {
    const first = await this.get(token);
    const a = first?.approval;
    if (!first || !a) return 'expired';
    return waitForTap(this.deps.wakeups, approvalTopic(a.id), async () => (await this.get(token))?.approval?.state ?? 'expired', Date.now() + ms, signal);
  }
}
