import { getUpdates } from './methods/get-updates.js';
import { deleteMessage, editMessageText, sendMessage } from './methods/messages.js';
import { deleteWebhook, getWebhookInfo, setWebhook } from './methods/webhook.js';
import { chatFullInfo, getMeUser } from './objects.js';
import { chatRef, type BotParams } from './params.js';
import type { BotRecord } from './ports.js';
import type { BotService } from './service.js';

export interface MethodContext {
  service: BotService;
  bot: BotRecord;
  /** Aborted when the caller goes away or the server stops. */
  signal: AbortSignal;
}

export type Method = (ctx: MethodContext, p: BotParams) => Promise<unknown>;

/** The Bot API methods we serve, by lower-case name (method names are case-insensitive). */
const table: Record<string, Method> = {
  getMe: async ({ bot }) => getMeUser(bot),
  getUpdates,
  sendMessage,
  editMessageText,
  deleteMessage,
  setWebhook,
  deleteWebhook,
  getWebhookInfo,
  getChat: async ({ service, bot }, p) => chatFullInfo((await service.privateChat(bot, chatRef(p))).person),
  // Leaving the cloud server: nothing is held per bot that would need moving, so both just succeed.
  logOut: async () => true,
  close: async () => true,
};

export const methods: Record<string, Method> = Object.fromEntries(Object.entries(table).map(([k, v]) => [k.toLowerCase(), v]));

/** Methods a webhook reply may not call (Bot API: "Making requests when getting updates"). */
export const notFromWebhookReply = (method: string) => /^get/i.test(method) || ['setwebhook', 'deletewebhook', 'logout', 'close'].includes(method.toLowerCase());
