import { randomBytes } from 'node:crypto';
import type { User } from '../model.js';
import type { Clock, UserStore } from '../ports.js';
import { recordEvent } from '../notify/record.js';
import { chatCallbackData, type ChatActionOutcome, type ChatActions, type ChatPress, type NotifyBotApi } from '../notify/actions.js';
import type { ApprovalTransactions, MfaStore } from './ports.js';

export const SETUP_PREFIX = 'mfaon';
/** Long enough to pick up the phone; the person asks again after it. */
export const SETUP_TTL_MS = 10 * 60_000;
const YES = 'y';
const NO = 'n';

export type SetupRequest = 'sent' | 'no_chat' | 'failed';

export interface SetupDeps {
  store: MfaStore;
  users: UserStore;
  clock: Clock;
  bot: NotifyBotApi | undefined;
  /** The person's enabled linked chat (ChatApproval.linkedChat). */
  linkedChat(userId: string): Promise<string | undefined>;
  /** The tap's decision and its event (mfa.enrolled) commit together. */
  transactions: ApprovalTransactions;
  log?: { warn(obj: object, msg: string): void };
}

/**
 * Turning approval in chat on (issue 24): once on, every sign-in waits for a
 * tap in the linked chat, so it is turned on only by a tap in that chat. A
 * link that does not reach the person (a wrong chat, a bot that cannot
 * write) therefore never turns it on, and cannot lock them out.
 */
export class ChatApprovalSetup {
  constructor(private readonly deps: SetupDeps) {}

  register(actions: ChatActions): void {
    actions.registerChatAction(SETUP_PREFIX, (press) => this.press(press));
  }

  /** Sends the confirmation to the linked chat; approval stays off until "Turn on" is tapped there. */
  async request(user: User): Promise<SetupRequest> {
    const { store, clock, bot } = this.deps;
    const chatId = await this.deps.linkedChat(user.id);
    if (!chatId || !bot) return 'no_chat';
    const id = randomBytes(12).toString('base64url');
    await store.requestChatApproval(user.id, { id, chatId, expiresAt: clock.now() + SETUP_TTL_MS });
    const data = (choice: string) => chatCallbackData(SETUP_PREFIX, `${id}.${choice}`);
    try {
      await bot.send(chatId, `Turn on sign-in approval in chat for ${user.username}? From then on every sign-in to ${user.username} waits for a tap in this chat. If you did not ask for this, tap Cancel and change your password.`, [
        [{ text: 'Turn on', data: data(YES) }, { text: 'Cancel', data: data(NO) }],
      ]);
    } catch (err) {
      this.deps.log?.warn({ err }, 'chat approval: sending the confirmation failed');
      await store.dropChatApprovalRequest(id);
      return 'failed';
    }
    return 'sent';
  }

  private async press(press: ChatPress): Promise<ChatActionOutcome> {
    const m = /^([A-Za-z0-9_-]{16})\.([yn])$/.exec(press.payload);
    const r = m ? await this.deps.store.chatApprovalRequest(m[1]!) : undefined;
    if (!m || !r) return { answer: 'This request is no longer open.', editText: 'This request is no longer open. Nothing changed.' };
    // Only the chat it was sent to, while it is still that person's linked chat.
    if (r.chatId !== press.chatId) return { answer: 'This request is not yours.', showAlert: true };
    if ((await this.deps.linkedChat(r.userId)) !== press.chatId) return { answer: 'This chat is no longer linked.', editText: 'This chat is no longer linked. Nothing changed.' };
    if (m[2] === NO) {
      await this.deps.store.dropChatApprovalRequest(r.id);
      return { answer: 'Cancelled.', editText: 'Sign-in approval in chat stays off.' };
    }
    const now = press.now;
    const on = await this.deps.transactions.transaction(async (tx) => {
      if (!(await tx.mfa.confirmChatApproval(r.id, now))) return false;
      await recordEvent(tx, 'mfa.enrolled', { user_id: r.userId, factor: 'chat_approval' }, now);
      return true;
    });
    if (!on) {
      return r.expiresAt <= now
        ? { answer: 'This request expired.', editText: 'This request expired. Sign-in approval in chat stays off; turn it on again on the security page.' }
        : { answer: 'This request is no longer open.', editText: 'This request is no longer open. Nothing changed.' };
    }
    return { answer: 'Sign-in approval in chat is on.', editText: 'Sign-in approval in chat is on: every sign-in now waits for a tap here.' };
  }
}
