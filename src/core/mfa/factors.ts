import type { Clock, PasswordHasher, RateLimitStore, UserStore } from '../ports.js';
import type { User } from '../model.js';
import type { EventStore } from '../notify/ports.js';
import { recordEvent, type Recorder } from '../notify/record.js';
import type { EventPayloads } from '../notify/events.js';
import { CredentialThrottle } from '../throttle.js';
import type { FactorStores, FactorTransactions, MfaStore, Passkey } from './ports.js';
import {
  RECOVERY_CODE_COUNT, isTotpCode, newRecoveryCode, newTotpSecret, normalRecoveryCode, recoveryCodeHash, totpStep, totpUri,
} from './totp.js';

export interface FactorDeps {
  store: MfaStore;
  users: UserStore;
  hasher: PasswordHasher;
  clock: Clock;
  events: EventStore;
  limits: RateLimitStore;
  /** Names the account in authenticator apps. */
  issuerName: string;
  /** Whether the person has an enabled linked chat the notification bot can write to (ChatApproval.linkedChat). */
  chatLinked?: (userId: string) => Promise<boolean>;
  /** A change and its event (which the linked chat is told of) in one transaction; without it, one after the other. */
  transactions?: FactorTransactions;
}

export type CodeCheck = { ok: true; kind: 'totp' | 'recovery' } | { ok: false; reason: 'invalid' } | { ok: false; reason: 'locked'; retryAfterSeconds: number };

export interface SecurityOverview {
  totp: 'off' | 'pending' | 'on';
  passkeys: Passkey[];
  recoveryCodesLeft: number;
  chatApproval: boolean;
}

/**
 * A person's second factors (docs/security.md, Second factors): the
 * authenticator app (RFC 6238), recovery codes and passkeys, and the checks of
 * a code at the second step. Wrong codes (and wrong passwords when removing a
 * factor) are counted per account and per address by the same atomic limiter
 * as passwords (src/core/throttle.ts), under their own kind so a right password
 * does not forgive second-step failures.
 */
export class SecondFactors {
  readonly throttle: CredentialThrottle;

  constructor(private readonly deps: FactorDeps) {
    this.throttle = new CredentialThrottle(deps.limits, deps.clock, { kind: 'mfa', perCredential: 5, perAddress: 20, windowMs: 15 * 60_000 });
  }

  private record<T extends 'mfa.enrolled' | 'mfa.removed'>(stores: { events: Recorder }, type: T, data: EventPayloads[T]) {
    return recordEvent(stores, type, data, this.deps.clock.now());
  }

  /** A change of a factor with its event: both commit, or neither (a factor must not change unannounced). */
  private change<T>(fn: (s: FactorStores) => Promise<T>): Promise<T> {
    const { transactions, store, events } = this.deps;
    return transactions ? transactions.transaction(fn) : fn({ mfa: store, events });
  }

  /**
   * A confirmed authenticator app, a passkey, or approval in chat: the
   * password alone (or a third-party sign-in) no longer signs in. Approval in
   * chat counts only while the person has an enabled linked chat: once the
   * link is gone (/stop, the endpoint disabled, no notification bot) nobody
   * could tap, so it would lock the person out; the password alone then signs
   * in again (docs/security.md, The chat channel).
   */
  async required(userId: string): Promise<boolean> {
    const { store } = this.deps;
    const [totp, passkeys, chat] = await Promise.all([store.getTotp(userId), store.listPasskeys(userId), store.chatApproval(userId)]);
    if (totp?.confirmedAt || passkeys.length > 0) return true;
    return chat && this.deps.chatLinked !== undefined && (await this.deps.chatLinked(userId));
  }

  /** An authenticator app or a passkey: what recovery codes stand in for (approval in chat needs none: it turns itself off with its link). */
  async hasCodeFactor(userId: string): Promise<boolean> {
    const { store } = this.deps;
    const [totp, passkeys] = await Promise.all([store.getTotp(userId), store.listPasskeys(userId)]);
    return Boolean(totp?.confirmedAt) || passkeys.length > 0;
  }

  async overview(userId: string): Promise<SecurityOverview> {
    const { store } = this.deps;
    const [totp, passkeys, recoveryCodesLeft, chatApproval] = await Promise.all([
      store.getTotp(userId), store.listPasskeys(userId), store.recoveryCodesLeft(userId), store.chatApproval(userId),
    ]);
    return { totp: !totp ? 'off' : totp.confirmedAt ? 'on' : 'pending', passkeys, recoveryCodesLeft, chatApproval };
  }

  /** A new (unconfirmed) secret, or the pending one again; undefined when an app is already confirmed. */
  async startTotp(user: User): Promise<{ secret: string; uri: string } | undefined> {
    const { store, clock, issuerName } = this.deps;
    let t = await store.getTotp(user.id);
    if (t?.confirmedAt) return undefined;
    if (!t) {
      if (!(await store.startTotp(user.id, newTotpSecret(), clock.now()))) return undefined;
      t = await store.getTotp(user.id);
      if (!t) return undefined;
    }
    return { secret: t.secret, uri: totpUri(t.secret, issuerName, user.username) };
  }

  /** The first code from the app turns it on; the first factor also gets recovery codes (returned once). */
  async confirmTotp(userId: string, code: string, address: string): Promise<{ ok: true; recoveryCodes: string[] | undefined } | Exclude<CodeCheck, { ok: true }>> {
    const { store, clock } = this.deps;
    const gate = await this.throttle.admit(userId, address);
    if (!gate.allowed) return { ok: false, reason: 'locked', retryAfterSeconds: gate.retryAfterSeconds };
    const t = await store.getTotp(userId);
    const step = t && !t.confirmedAt ? totpStep(t.secret, code, clock.now()) : undefined;
    const confirmed = step !== undefined && (await this.change(async (s) => {
      if (!(await s.mfa.confirmTotp(userId, step, clock.now()))) return false;
      await this.record(s, 'mfa.enrolled', { user_id: userId, factor: 'totp' });
      return true;
    }));
    if (!confirmed) return { ok: false, reason: 'invalid' };
    await this.throttle.succeeded(userId, address);
    const recoveryCodes = (await store.recoveryCodesLeft(userId)) === 0 ? await this.newRecoveryCodes(userId) : undefined;
    return { ok: true, recoveryCodes };
  }

  /** Ten new codes, replacing the old ones; stored hashed, so shown only now. */
  async newRecoveryCodes(userId: string): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await this.change(async (s) => {
      await s.mfa.setRecoveryCodes(userId, codes.map(recoveryCodeHash), this.deps.clock.now());
      await this.record(s, 'mfa.enrolled', { user_id: userId, factor: 'recovery_codes' });
    });
    return codes;
  }

  /**
   * A code typed at the second step (or to prove it is the person): a TOTP code
   * of a confirmed app, used at most once (its time step is compare-and-set),
   * or an unused recovery code, burnt by the same statement that accepts it.
   */
  async checkCode(userId: string, code: string, address: string): Promise<CodeCheck> {
    const gate = await this.throttle.admit(userId, address);
    if (!gate.allowed) return { ok: false, reason: 'locked', retryAfterSeconds: gate.retryAfterSeconds };
    let kind: 'totp' | 'recovery' | undefined;
    try {
      kind = await this.matches(userId, code.trim());
    } catch (e) {
      await this.throttle.abandoned(userId, address).catch(() => undefined);
      throw e;
    }
    if (!kind) return { ok: false, reason: 'invalid' };
    await this.throttle.succeeded(userId, address);
    return { ok: true, kind };
  }

  private async matches(userId: string, code: string): Promise<'totp' | 'recovery' | undefined> {
    const { store, clock } = this.deps;
    const now = clock.now();
    if (isTotpCode(code)) {
      const t = await store.getTotp(userId);
      if (!t?.confirmedAt) return undefined;
      const step = totpStep(t.secret, code, now);
      return step !== undefined && (await store.useTotpStep(userId, step)) ? 'totp' : undefined;
    }
    const normal = normalRecoveryCode(code);
    return normal && (await store.useRecoveryCode(userId, recoveryCodeHash(normal), now)) ? 'recovery' : undefined;
  }

  /** Before a factor is removed: the password, or a code of another factor (throttled like either). */
  async proves(user: User, proof: { password?: string | undefined; code?: string | undefined }, address: string): Promise<CodeCheck> {
    if (proof.code) return this.checkCode(user.id, proof.code, address);
    if (!proof.password || proof.password.length > 1024) return { ok: false, reason: 'invalid' };
    const gate = await this.throttle.admit(user.id, address);
    if (!gate.allowed) return { ok: false, reason: 'locked', retryAfterSeconds: gate.retryAfterSeconds };
    if (!(await this.deps.hasher.verify(user.passwordHash, proof.password))) return { ok: false, reason: 'invalid' };
    await this.throttle.succeeded(user.id, address);
    return { ok: true, kind: 'totp' };
  }

  async removeTotp(userId: string): Promise<boolean> {
    return this.change(async (s) => {
      const gone = await s.mfa.deleteTotp(userId);
      if (gone) await this.record(s, 'mfa.removed', { user_id: userId, factor: 'totp' });
      return gone;
    });
  }

  async removeRecoveryCodes(userId: string): Promise<boolean> {
    return this.change(async (s) => {
      const n = await s.mfa.deleteRecoveryCodes(userId);
      if (n) await this.record(s, 'mfa.removed', { user_id: userId, factor: 'recovery_codes' });
      return n > 0;
    });
  }

  async addPasskey(p: Passkey): Promise<void> {
    await this.change(async (s) => {
      await s.mfa.addPasskey(p);
      await this.record(s, 'mfa.enrolled', { user_id: p.userId, factor: 'passkey', passkey_name: p.name });
    });
  }

  async removePasskey(userId: string, id: string): Promise<boolean> {
    return this.change(async (s) => {
      const p = (await s.mfa.listPasskeys(userId)).find((k) => k.id === id);
      if (!p || !(await s.mfa.deletePasskey(userId, id))) return false;
      await this.record(s, 'mfa.removed', { user_id: userId, factor: 'passkey', passkey_name: p.name });
      return true;
    });
  }

  /**
   * Turns approval in chat off (and ends a request to turn it on). It is
   * turned on only by a tap in the linked chat (src/core/mfa/approval-setup.ts);
   * `on` here is for the operator's tools.
   */
  async setChatApproval(userId: string, on: boolean): Promise<void> {
    await this.change(async (s) => {
      const was = await s.mfa.chatApproval(userId);
      await s.mfa.setChatApproval(userId, on);
      if (was !== on) await this.record(s, on ? 'mfa.enrolled' : 'mfa.removed', { user_id: userId, factor: 'chat_approval' });
    });
  }
}
