import type { Client } from '../model.js';
import { chatCallbackData, type ChatActionOutcome, type ChatActions, type ChatPress, type NotifyBotApi } from '../notify/actions.js';
import type { EventStore } from '../notify/ports.js';
import type { BackchannelRequest } from './device-ports.js';
import { describeScope } from './device.js';
import { quotedClientName } from './client-name.js';

/** callback_data prefixes of the Approve/Deny buttons (src/core/notify/actions.ts). */
export const DEVICE_ACTION = 'device';
export const CIBA_ACTION = 'ciba';

/** The people a chat is linked to (their personal notification endpoints). */
export async function linkedPeople(events: Pick<EventStore, 'endpoints'>, chatId: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const e of await events.endpoints.list()) {
    if (e.kind === 'chat' && e.userId !== null && e.chatId === chatId && e.disabledAt === null) out.add(e.userId);
  }
  return out;
}

/**
 * Sends device and CIBA requests to the person's linked chats with
 * "Approve" / "Deny" buttons, at once through the notification bot (not the
 * outbox: the request waits for the answer).
 */
export class ApprovalChat {
  constructor(private readonly deps: { bot: NotifyBotApi; events: Pick<EventStore, 'endpoints'>; log?: { warn(obj: object, msg: string): void } }) {}

  async ask(r: BackchannelRequest, client: Client): Promise<void> {
    if (!r.userId) return;
    const chats = (await this.deps.events.endpoints.list({ userId: r.userId })).filter((e) => e.kind === 'chat' && e.chatId && e.disabledAt === null);
    const prefix = r.kind === 'device' ? DEVICE_ACTION : CIBA_ACTION;
    // The name is quoted, on its own line's start, so it cannot pass for Gatehouse's words (client-name.ts).
    const app = `App ${quotedClientName(client.name)}`;
    const what = r.kind === 'device' ? `A device you are signing in to asks for access as ${app}` : `${app} asks for your permission`;
    const text = [
      `${what}.`,
      `Access: ${describeScope(r.scope)}`,
      ...(r.bindingMessage ? [`Message: ${r.bindingMessage}`] : []),
      'Approve only if you started this.',
    ].join('\n');
    const buttons = [[{ text: 'Approve', data: chatCallbackData(prefix, `a:${r.id}`) }, { text: 'Deny', data: chatCallbackData(prefix, `d:${r.id}`) }]];
    await Promise.all(chats.map((e) => this.deps.bot.send(e.chatId!, text, buttons)
      .catch((err) => this.deps.log?.warn({ err }, 'an approval request could not be sent to a linked chat'))));
  }
}

/**
 * The Approve/Deny handler of one kind: it acts only for the person the chat
 * is linked to and only on their own request; anything else (a forged or
 * stale button) does nothing and says so.
 */
export function approvalHandler(
  events: Pick<EventStore, 'endpoints'>,
  decide: (id: string, userId: string, approve: boolean) => Promise<boolean>,
): (press: ChatPress) => Promise<ChatActionOutcome> {
  return async (press) => {
    const m = /^([ad]):([0-9a-f-]{36})$/.exec(press.payload);
    if (!m) return { answer: 'This button no longer works.' };
    const approve = m[1] === 'a';
    for (const userId of await linkedPeople(events, press.chatId)) {
      if (await decide(m[2]!, userId, approve)) {
        return approve
          ? { answer: 'Approved.', editText: 'Approved: the application may continue.' }
          : { answer: 'Denied.', editText: 'Denied: the application was refused.' };
      }
    }
    return { answer: 'Nothing done: this request is not open, or not yours.', showAlert: true };
  };
}

/** Registers the device and CIBA buttons. */
export function registerApprovalActions(actions: ChatActions, events: Pick<EventStore, 'endpoints'>, flows: {
  device: (id: string, userId: string, approve: boolean) => Promise<boolean>;
  ciba: (id: string, userId: string, approve: boolean) => Promise<boolean>;
}): void {
  actions.registerChatAction(DEVICE_ACTION, approvalHandler(events, flows.device));
  actions.registerChatAction(CIBA_ACTION, approvalHandler(events, flows.ciba));
}
