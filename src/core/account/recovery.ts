import { randomBytes, randomInt } from 'node:crypto';
import { randomToken, sha256 } from '../crypto.js';
import { GatehouseError } from '../errors.js';
import { isMailAddress, type Mailer } from '../mail/mailer.js';
import type { User } from '../model.js';
import type { Clock, UserStore } from '../ports.js';
import type { CredentialThrottle } from '../throttle.js';
import type { Wakeups } from '../bot/wakeups.js';
import { chatCallbackData, type ChatActionOutcome, type ChatActions, type ChatPress, type NotifyBotApi } from '../notify/actions.js';
import type { CodeCheck } from '../mfa/factors.js';
import type { PasswordReset, UserAccountStore, UserAccountTransactions } from './user-accounts-ports.js';
import type { UserAccounts } from './user-accounts.js';
import { waitForTap } from '../mfa/wait-for-tap.js';

/** An e-mailed link works 30 minutes (issue 26, item 4). */
export const RESET_LINK_TTL_MS = 30 * 60_000;
/** The number in chat is tapped within 2 minutes, as at sign-in; the new password is then set within 15. */
export const RESET_APPROVAL_TTL_MS = 2 * 60_000;
export const RESET_CHAT_TTL_MS = 15 * 60_000;
/** Every request is answered after at least this long, whether or not the account exists or has a chat (the same time). */
export const RESET_MIN_ANSWER_MS = 600;
export const RESET_PREFIX = 'reset';
const NOT_ME = 'n';

export const resetTopic = (approvalId: string) => `reset-approval:${approvalId}`;

/** Requests per name asked for and per address, counted before anything is looked up (src/core/throttle.ts). */
export const RESET_POLICY = { kind: 'reset', perCredential: 5, perAddress: 20, windowMs: 15 * 60_000 };

export interface RecoveryDeps {
  store: UserAccountStore;
  transactions: UserAccountTransactions;
  accounts: UserAccounts;
  users: Pick<UserStore, 'get' | 'findByUsername'>;
  mailer: Pick<Mailer, 'enqueue' | 'enabled'>;
  clock: Clock;
  throttle: CredentialThrottle;
  /** The person's linked chat with the notification bot (ChatApproval.linkedChat). */
  linkedChat(userId: string): Promise<string | undefined>;
  bot: NotifyBotApi | undefined;
  wakeups: Wakeups;
  factors: { required(userId: string): Promise<boolean>; checkCode(userId: string, code: string, address: string): Promise<CodeCheck> };
  isLocked(userId: string): Promise<boolean>;
  /** Lifts a lock (src/core/account-lock.ts unlockAccount, by `password_reset`). */
  unlock(userId: string, ip: string): Promise<unknown>;
  authUrl: () => string;
  log?: { warn(obj: object, msg: string): void };
}

export type RequestOutcome =
  | { ok: true; via: 'email' }
  | { ok: true; via: 'chat'; token: string; number: number }
  | { ok: false; retryAfterSeconds: number };

/** What the page with the new-password field may show. */
export type FormState =
  | { ok: true; needsCode: boolean; username: string }
  | { ok: false; reason: 'expired' | 'waiting' | 'denied' };

export type CompleteOutcome =
  | { ok: true; username: string; unlocked: boolean }
  | { ok: false; reason: 'expired' | 'waiting' | 'denied' }
  | { ok: false; reason: 'code'; message: string; retryAfterSeconds?: number }
  | { ok: false; reason: 'password'; message: string };

function numbers(): { number: number; choices: number[] } {
  const set = new Set<number>();
  while (set.size < 3) set.add(randomInt(10, 100));
  const choices = [...set];
  return { number: choices[randomInt(0, 3)]!, choices };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, Math.max(0, ms)));

/**
 * "Forgot password?" (docs/security.md, Recovery). A request names a
 * username or an e-mail address and asks for an e-mailed link or a number to
 * tap in the linked chat. It is answered the same way, after the same
 * minimum time, whether or not the account exists, has an address or a
 * chat: a reset row is written in every case and the page shows a number
 * every time one is asked for. The link's token and the chat's cookie are
 * stored as SHA-256 only; a reset is used once (a conditional UPDATE). An
 * account with a second factor still needs it (the tap in chat is one);
 * only then does the reset lift a lock.
 */
export class PasswordRecovery {
  constructor(private readonly deps: RecoveryDeps) {}

  register(actions: ChatActions): void {
    actions.registerChatAction(RESET_PREFIX, (press) => this.press(press));
  }

  async request(input: string, via: 'email' | 'chat', ip: string, browser: string): Promise<RequestOutcome> {
    const started = Date.now();
    const name = input.trim().slice(0, 254);
    // Counted per name as typed (any case) and per address, atomically, before any lookup: the count does not tell which exist.
    const verdict = await this.deps.throttle.failed(name.toLowerCase(), ip);
    if (!verdict.allowed) return { ok: false, retryAfterSeconds: verdict.retryAfterSeconds };
    const user = await this.find(name);
    const token = randomToken();
    const now = this.deps.clock.now();
    let outcome: RequestOutcome;
    if (via === 'email') {
      await this.emailLink(user, token, ip, now);
      outcome = { ok: true, via };
    } else {
      const chatId = user && this.deps.bot ? ((await this.deps.linkedChat(user.id)) ?? null) : null;
      const { number, choices } = numbers();
      const reset: PasswordReset = {
        userId: user?.id ?? null, via, ip, createdAt: now, expiresAt: now + RESET_CHAT_TTL_MS, factorAt: null,
        approval: { id: randomBytes(12).toString('base64url'), number, choices, chatId, messageId: null, state: 'waiting', expiresAt: now + RESET_APPROVAL_TTL_MS },
      };
      await this.deps.store.putReset(sha256(token), reset);
      if (chatId) await this.send(reset, browser);
      outcome = { ok: true, via, token, number };
    }
    // The same time for every answer: the work above differs (a hash, an e-mail queued, a chat message sent).
    await sleep(started + RESET_MIN_ANSWER_MS - Date.now());
    return outcome;
  }

  /**
   * An administrator's "Send a reset link" (the console): the same link as a
   * request by e-mail, to the account's address. False when the account has
   * no address the mailer takes, or e-mail is off.
   */
  async sendLink(userId: string, ip: string): Promise<boolean> {
    const user = await this.deps.users.get(userId);
    if (!user || !this.deps.mailer.enabled || !isMailAddress(user.email)) return false;
    await this.emailLink(user, randomToken(), ip, this.deps.clock.now());
    return true;
  }

  private async emailLink(user: User | undefined, token: string, ip: string, now: number): Promise<void> {
    await this.deps.transactions.transaction(async (tx) => {
      await tx.accounts.putReset(sha256(token), { userId: user?.id ?? null, via: 'email', ip, createdAt: now, expiresAt: now + RESET_LINK_TTL_MS, factorAt: null, approval: null });
      if (user && isMailAddress(user.email)) {
        const url = `${this.deps.authUrl().replace(/\/+$/, '')}/login/forgot/reset?token=${token}`;
        await this.deps.mailer.enqueue(tx, { to: user.email, template: 'password-reset', data: { url, expiresMinutes: RESET_LINK_TTL_MS / 60_000, ...(user.name ? { name: user.name } : {}) }, userId: user.id });
      }
    });
  }

  private async find(name: string): Promise<User | undefined> {
    if (!name) return undefined;
    const byName = await this.deps.users.findByUsername(name);
    if (byName) return byName;
    if (!name.includes('@')) return undefined;
    const [first] = await this.deps.store.findByEmail(name, 1);
    return first ? this.deps.users.get(first.id) : undefined;
  }

  private async send(r: PasswordReset, browser: string): Promise<void> {
    const a = r.approval!;
    const data = (choice: string) => chatCallbackData(RESET_PREFIX, `${a.id}.${choice}`);
    try {
      const messageId = await this.deps.bot!.send(a.chatId!, `Password reset asked for from ${browser} near ${r.ip} — tap the number you see to choose a new password`, [
        a.choices.map((n, i) => ({ text: String(n), data: data(String(i)) })),
        [{ text: 'Not me', data: data(NOT_ME) }],
      ]);
      await this.deps.store.setResetApprovalMessage(a.id, messageId);
    } catch (err) {
      this.deps.log?.warn({ err }, 'password reset: sending the chat message failed');
    }
  }

  private async press(press: ChatPress): Promise<ChatActionOutcome> {
    const m = /^([A-Za-z0-9_-]{16})\.([0-2]|n)$/.exec(press.payload);
    const found = m && (await this.deps.store.findResetApproval(m[1]!));
    const a = found?.reset.approval;
    if (!m || !found || !a) return { answer: 'This request is no longer open.' };
    // Only the linked person's own chat acts on it.
    if (a.chatId !== press.chatId) return { answer: 'This request is not yours.', showAlert: true };
    if (a.state === 'waiting' && a.expiresAt <= press.now) return { answer: 'This request expired.', editText: 'Password reset expired. Nothing was changed.' };
    const right = m[2] !== NOT_ME && a.choices[Number(m[2])] === a.number;
    if (!(await this.deps.store.decideResetApproval(a.id, right ? 'approved' : 'denied', press.now))) {
      return { answer: 'This request was already answered.', editText: 'Password reset: already answered.' };
    }
    this.deps.wakeups.publish(resetTopic(a.id));
    if (right) return { answer: 'Approved. Choose your new password on the page.', editText: 'Password reset approved: choose the new password on the page.' };
    return { answer: 'Denied: nothing was changed.', editText: 'Password reset denied. Your password was not changed.' };
  }

  /** The reset this browser or link holds, with an approval past its time read as expired. */
  async get(token: string | undefined): Promise<(PasswordReset & { usedAt: number | null }) | undefined> {
    if (!token || token.length > 128) return undefined;
    const r = await this.deps.store.getReset(sha256(token));
    const now = this.deps.clock.now();
    if (!r || r.usedAt !== null || r.expiresAt <= now) return undefined;
    if (r.approval?.state === 'waiting' && r.approval.expiresAt <= now) r.approval.state = 'expired';
    return r;
  }

  /** Waits up to `ms` for the tap (the page's long poll): the approval's state then. */
  async wait(token: string | undefined, ms: number, signal: AbortSignal): Promise<string> {
    const first = await this.get(token);
    const a = first?.approval;
    if (!a) return 'expired';
    return waitForTap(this.deps.wakeups, resetTopic(a.id), async () => (await this.get(token))?.approval?.state ?? 'expired', Date.now() + ms, signal);
  }

  async form(token: string | undefined): Promise<FormState> {
    const r = await this.get(token);
    const state = r?.approval?.state;
    if (!r || !r.userId || state === 'expired') return { ok: false, reason: 'expired' };
    if (state === 'denied') return { ok: false, reason: 'denied' };
    if (state === 'waiting') return { ok: false, reason: 'waiting' };
    const user = await this.deps.users.get(r.userId);
    if (!user) return { ok: false, reason: 'expired' };
    return { ok: true, needsCode: r.factorAt === null && (await this.deps.factors.required(user.id)), username: user.username };
  }

  /**
   * Sets the new password: the second factor first when the account has one
   * and the reset has none yet (a code: TOTP or a recovery code, counted by
   * the factors' own limiter), the policy, then in one transaction the reset
   * used up and UserAccounts.setPassword (sessions ended, tokens revoked,
   * event and notices). A lock is lifted only when a second factor was given.
   */
  async complete(token: string | undefined, password: string, code: string | undefined, ip: string): Promise<CompleteOutcome> {
    const state = await this.form(token);
    if (!state.ok) return state;
    const r = (await this.get(token))!;
    const userId = r.userId!;
    let factor = r.factorAt !== null;
    if (state.needsCode) {
      if (!code) return { ok: false, reason: 'code', message: 'Enter the code from your authenticator app or a recovery code.' };
      const check = await this.deps.factors.checkCode(userId, code, ip);
      if (!check.ok) {
        return check.reason === 'locked'
          ? { ok: false, reason: 'code', message: 'Too many wrong codes. Wait 15 minutes and try again.', retryAfterSeconds: check.retryAfterSeconds }
          : { ok: false, reason: 'code', message: 'That code is not right, or it was already used.' };
      }
      factor = true;
    }
    const user = (await this.deps.users.get(userId))!;
    let prepared;
    try {
      prepared = await this.deps.accounts.prepare(password, user);
    } catch (e) {
      if (e instanceof GatehouseError && e.code === 'invalid_request') return { ok: false, reason: 'password', message: e.description ?? e.message };
      throw e;
    }
    const now = this.deps.clock.now();
    const done = await this.deps.transactions.transaction(async (tx) => {
      if (!(await tx.accounts.consumeReset(sha256(token!), now))) return false;
      await this.deps.accounts.setPassword(tx, userId, prepared, { by: 'reset', ip }, now);
      return true;
    });
    if (!done) return { ok: false, reason: 'expired' };
    const unlocked = factor && (await this.deps.isLocked(userId));
    if (unlocked) await this.deps.unlock(userId, ip);
    return { ok: true, username: user.username, unlocked };
  }
}
