import { randomBytes, randomInt } from 'node:crypto';
import type { Clock, UserStore } from '../ports.js';
import type { EventStore } from '../notify/ports.js';
import { recordEvent } from '../notify/record.js';
import { lockAccount } from '../account-lock.js';
import { chatCallbackData, type ChatActionOutcome, type ChatActions, type ChatPress, type NotifyBotApi } from '../notify/actions.js';
import type { Wakeups } from '../bot/wakeups.js';
import type { ApprovalTransactions, MfaStore, PendingLogin } from './ports.js';

/** Requests expire after 2 minutes (issue 14): long enough to find the phone, short enough to be this sign-in. */
export const APPROVAL_TTL_MS = 2 * 60_000;
export const APPROVAL_PREFIX = 'signin';
const NOT_ME = 'n';

export const approvalTopic = (approvalId: string) => `mfa-approval:${approvalId}`;

export interface ApprovalDeps {
  store: MfaStore;
  events: EventStore;
  users: UserStore;
  clock: Clock;
  /** The notification bot; undefined when GATEHOUSE_NOTIFY_BOT_TOKEN is unset (no approval in chat then). */
  bot: NotifyBotApi | undefined;
  /** Wakes the waiting page in this process (others re-read storage). */
  wakeups: Wakeups;
  /**
   * A decision, its event and the lock after "Not me" (src/core/account-lock.ts:
   * an administrator unlocks it) are written in one transaction.
   */
  transactions: ApprovalTransactions;
  log?: { warn(obj: object, msg: string): void };
}

/** Three distinct two-digit numbers, the right one at a random place. */
function numbers(): { number: number; choices: number[] } {
  const set = new Set<number>();
  while (set.size < 3) set.add(randomInt(10, 100));
  const choices = [...set];
  return { number: choices[randomInt(0, 3)]!, choices };
}

/**
 * Sign-in approval in chat with number matching (docs/security.md). A plain
 * "Approve" button invites MFA fatigue: someone with the password sends
 * requests until a tired person taps one. Here the person must tap the number
 * the sign-in page shows, which only whoever sits at that page knows; a wrong
 * number denies, and "Not me" denies and locks the account.
 */
export class ChatApproval {
  constructor(private readonly deps: ApprovalDeps) {}

  register(actions: ChatActions): void {
    actions.registerChatAction(APPROVAL_PREFIX, (press) => this.press(press));
  }

  /** The person's linked chat with the notification bot (docs/events.md, Chat notifications). */
  async linkedChat(userId: string): Promise<string | undefined> {
    if (!this.deps.bot) return undefined;
    const e = (await this.deps.events.endpoints.list({ userId })).find((x) => x.kind === 'chat' && x.disabledAt === null && x.chatId);
    return e?.chatId ?? undefined;
  }

  /** The approval part of a new pending login, when the person turned it on and has a linked chat. */
  async prepare(userId: string, now: number): Promise<PendingLogin['approval']> {
    if (!(await this.deps.store.chatApproval(userId))) return null;
    const chatId = await this.linkedChat(userId);
    if (!chatId) return null;
    return { id: randomBytes(12).toString('base64url'), ...numbers(), chatId, messageId: null, state: 'waiting', expiresAt: now + APPROVAL_TTL_MS };
  }

  /** Sends the message with the buttons (after the pending login is stored, so a fast press finds it). */
  async send(p: PendingLogin, browser: string): Promise<void> {
    const a = p.approval;
    if (!a || !this.deps.bot) return;
    const data = (choice: string) => chatCallbackData(APPROVAL_PREFIX, `${a.id}.${choice}`);
    const text = `Sign-in from ${browser} near ${p.ip} — tap the number you see`;
    try {
      const messageId = await this.deps.bot.send(a.chatId, text, [
        a.choices.map((n, i) => ({ text: String(n), data: data(String(i)) })),
        [{ text: 'Not me', data: data(NOT_ME) }],
      ]);
      await this.deps.store.setApprovalMessage(a.id, messageId);
    } catch (err) {
      // The page still takes a code; the person sees no message to tap.
      this.deps.log?.warn({ err }, 'sign-in approval: sending the chat message failed');
    }
    await recordEvent({ events: this.deps.events }, 'signin.approval.requested', {
      user_id: p.userId, approval_id: a.id, ip: p.ip, browser, expires_at: new Date(a.expiresAt).toISOString(),
    }, this.deps.clock.now());
  }

  /**
   * Past its time and still waiting: expired (once: the conditional UPDATE
   * picks one process to record the event), then the message says so.
   */
  async expireIfDue(p: PendingLogin, now: number): Promise<void> {
    const a = p.approval;
    if (!a || a.state !== 'waiting' || a.expiresAt > now) return;
    const expired = await this.deps.transactions.transaction(async (tx) => {
      if (!(await tx.mfa.expireApproval(a.id, now))) return false;
      await recordEvent(tx, 'signin.approval.denied', { user_id: p.userId, approval_id: a.id, ip: p.ip, reason: 'expired' }, now);
      return true;
    });
    if (!expired) return;
    this.deps.wakeups.publish(approvalTopic(a.id));
    a.state = 'expired';
    await this.editExpired(a);
  }

  /**
   * The edit is at least once: the message id stays stored until an edit
   * succeeded, so one a process could not make (it stopped, the Bot API was
   * down) is made by the next sweep; editing twice to the same text changes
   * nothing.
   */
  private async editExpired(a: NonNullable<PendingLogin['approval']>): Promise<void> {
    if (a.messageId === null || !this.deps.bot) return;
    try {
      await this.deps.bot.edit(a.chatId, a.messageId, outcomeText('expired'));
    } catch (err) {
      // Already edited (by a press's answer or another process): done; anything else waits for the next sweep.
      if (!/message is not modified/.test((err as Error).message)) return this.deps.log?.warn({ err }, 'sign-in approval: editing the expired message failed');
    }
    await this.deps.store.approvalMessageEdited(a.id, a.messageId);
    a.messageId = null;
  }

  /**
   * The notification worker's sweep (src/infra/notify-worker.ts): approvals
   * nobody pressed or looked at are marked expired and their message edited
   * within a sweep of their 2 minutes, not only when pressed. Safe in every
   * process at once: the expiry is recorded by one, the edit repeated
   * harmlessly. How many it looked at.
   */
  async sweepExpired(now: number, limit = 100): Promise<number> {
    if (!this.deps.bot) return 0;
    const due = await this.deps.store.approvalsToClose(now, limit);
    for (const p of due) {
      if (p.approval?.state === 'waiting') await this.expireIfDue(p, now);
      // Expired already, by a process that did not get its edit through.
      else if (p.approval) await this.editExpired(p.approval);
    }
    return due.length;
  }

  private async press(press: ChatPress): Promise<ChatActionOutcome> {
    const m = /^([A-Za-z0-9_-]{16})\.([0-2]|n)$/.exec(press.payload);
    const found = m && (await this.deps.store.findApproval(m[1]!));
    const a = found?.pending.approval;
    if (!m || !found || !a) return { answer: 'This request is no longer open.' };
    // Only the linked person's chat acts on their own request.
    if (a.chatId !== press.chatId) return { answer: 'This request is not yours.', showAlert: true };
    const p = found.pending;
    const now = press.now;
    if (a.state === 'waiting' && a.expiresAt <= now) {
      await this.expireIfDue(p, now);
      return { answer: 'This request expired.', editText: 'Sign-in request expired. Nothing was approved.' };
    }
    const notMe = m[2] === NOT_ME;
    const right = !notMe && a.choices[Number(m[2])] === a.number;
    const to = right ? 'approved' : 'denied';
    // The one decision: of two presses racing, one moves the state; the other is told what happened.
    const decided = await this.deps.transactions.transaction(async (tx) => {
      if (!(await tx.mfa.decideApproval(a.id, to, now))) return false;
      if (right) {
        await recordEvent(tx, 'signin.approval.approved', { user_id: p.userId, approval_id: a.id, ip: p.ip }, now);
      } else {
        await recordEvent(tx, 'signin.approval.denied', { user_id: p.userId, approval_id: a.id, ip: p.ip, reason: notMe ? 'not_me' : 'wrong_number' }, now);
      }
      // Whoever got the password may already be in: the lock ends their sessions and revokes their tokens too.
      if (notMe) await lockAccount(tx, p.userId, { by: 'not_me', ip: p.ip }, now);
      return true;
    });
    if (!decided) {
      const again = await this.deps.store.findApproval(a.id);
      const state = again?.pending.approval?.state ?? 'expired';
      return { answer: `This request was already ${state}.`, editText: outcomeText(state) };
    }
    this.deps.wakeups.publish(approvalTopic(a.id));
    if (right) return { answer: 'Approved. The sign-in continues.', editText: outcomeText('approved') };
    if (notMe) {
      return {
        answer: 'Denied. Your account is locked.', showAlert: true,
        editText: 'Sign-in denied: you said it was not you. Your account is locked and signed out everywhere; an administrator can unlock it. Change your password: someone knows it.',
      };
    }
    return { answer: 'Wrong number: the sign-in was denied.', editText: outcomeText('denied') };
  }
}

function outcomeText(state: string): string {
  if (state === 'approved') return 'Sign-in approved.';
  if (state === 'denied') return 'Sign-in denied.';
  return 'Sign-in request expired. Nothing was approved.';
}
