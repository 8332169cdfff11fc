import { z } from 'zod';
import type { Clock } from '../ports.js';
import type { CallbackQueries } from './callbacks.js';
import type { Conversations } from './conversations.js';
import type { BotFiles } from './files.js';
import { MethodTable, method } from './method.js';
import { answerCallbackQuery } from './methods/callbacks.js';
import { chatMethods } from './methods/chat.js';
import { getUpdates } from './methods/get-updates.js';
import { fileMethods } from './methods/files.js';
import { deleteMessage, editMessageCaption, editMessageReplyMarkup, editMessageText } from './methods/edits.js';
import { sendMessage } from './methods/messages.js';
import { profileMethods } from './methods/profile.js';
import { deleteWebhook, getWebhookInfo, setWebhook } from './methods/webhook.js';
import { chatFullInfo, getMeUser } from './objects.js';
import { chatId } from './params.js';
import type { BotStores } from './ports.js';
import type { Wakeups } from './wakeups.js';

export interface MethodDeps {
  stores: Pick<BotStores, 'bots' | 'chats' | 'updates' | 'profiles'>;
  conversations: Conversations;
  callbacks: CallbackQueries;
  files: BotFiles;
  wakeups: Wakeups;
  clock: Clock;
  allowPrivateWebhooks: boolean;
  checkWebhookUrl: (url: URL) => Promise<string | undefined>;
}

const none = z.object({});

/**
 * The Bot API methods we serve: one entry each, given the dependencies it
 * uses. A new method is a new entry (its file under methods/ when it is
 * more than a line).
 */
export function botMethods(d: MethodDeps): MethodTable {
  const { bots, chats, updates, profiles } = d.stores;
  const { conversations, wakeups, clock } = d;
  return new MethodTable([
    // The row as stored now: a name set a moment ago through another process is the one answered (as Telegram does).
    method('getMe', { params: none, currentBot: true, run: async ({ bot }) => getMeUser(bot) }),
    getUpdates({ bots, updates, wakeups }),
    sendMessage({ conversations, chats }),
    editMessageText({ conversations, chats, wakeups, clock }),
    editMessageReplyMarkup({ conversations, chats, wakeups, clock }),
    editMessageCaption({ conversations, chats, wakeups, clock }),
    deleteMessage({ conversations, chats, wakeups, clock }),
    setWebhook({ bots, updates, wakeups, clock, allowPrivateWebhooks: d.allowPrivateWebhooks, checkWebhookUrl: d.checkWebhookUrl }),
    deleteWebhook({ bots, updates, wakeups }),
    getWebhookInfo({ updates }),
    answerCallbackQuery({ callbacks: d.callbacks }),
    ...profileMethods({ profiles, conversations, bots }),
    ...chatMethods({ conversations, chats, files: d.files }),
    ...fileMethods({ conversations, chats, files: d.files }),
    method('getChat', {
      params: z.object({ chat_id: chatId('chat_id', true) }),
      run: async ({ bot }, p) => chatFullInfo((await conversations.privateChat(bot, p.chat_id!)).person),
    }),
    // Leaving the cloud server: nothing is held per bot that would need moving, so both just succeed.
    method('logOut', { params: none, run: async () => true as const }),
    method('close', { params: none, run: async () => true as const }),
  ]);
}
