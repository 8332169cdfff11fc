import type { ChatMember, MessageOrigin } from '@grammyjs/types';
import { z } from 'zod';
import type { Conversations } from '../conversations.js';
import { badRequest } from '../errors.js';
import type { BotFiles } from '../files.js';
import { method, type ApiArgs, type ApiResult } from '../method.js';
import { botUser, personUser } from '../objects.js';
import { chatId, field, id, refusing, replyMarkup, replyParameters, sendFlags } from '../params.js';
import type { BotRecord, ChatStore, MessageContent, StoredMessage } from '../ports.js';
import { caption, messageCaption } from './edits.js';

type ChatDeps = { conversations: Conversations; chats: ChatStore; files: BotFiles };

/** Bot API sendChatAction actions, with the older names the official server still takes. */
type Action = ApiArgs<'sendChatAction'>['action'];
const ACTIONS = new Map<string, string>([
  ...['typing', 'upload_photo', 'record_video', 'upload_video', 'record_voice', 'upload_voice', 'upload_document', 'choose_sticker',
    'find_location', 'record_video_note', 'upload_video_note', 'cancel'].map((a) => [a, a] as const),
  ['record_audio', 'record_voice'], ['upload_audio', 'upload_voice'],
]);

/** A message the bot repeats into another of its chats (forwardMessage, copyMessage). */
async function source(d: ChatDeps, bot: BotRecord, from: number | string, messageId: number | undefined, what: 'forward' | 'copy') {
  const { person } = await d.conversations.privateChat(bot, from);
  const m = messageId === undefined ? undefined : await d.chats.getMessage(bot.id, person.id, messageId);
  if (!m) throw badRequest(`message to ${what} not found`);
  if (m.content?.has_protected_content) throw badRequest("message has protected content and can't be forwarded");
  return { person, m };
}

/** A photo or document travels with its copy, and the copy's chat may read its file. */
async function media(d: ChatDeps, m: StoredMessage, chatId: number): Promise<MessageContent> {
  const { photo, document } = m.content ?? {};
  if (photo) await d.files.grantIds(photo.map((p) => p.file_id), chatId);
  if (document) await d.files.grantIds([document.file_id], chatId);
  return { ...(photo ? { photo } : {}), ...(document ? { document } : {}) };
}

const chatAction = () => field((v): Action | undefined => {
  if (v !== undefined && typeof v !== 'string') throw badRequest('field "action" must be of type String');
  const action = ACTIONS.get((v ?? '').trim().toLowerCase());
  if (!action) throw badRequest('wrong parameter action in request');
  return action as Action;
});

const repeat = { chat_id: chatId('chat_id', true), from_chat_id: chatId('from_chat_id', true), message_id: id('message_id'), ...sendFlags };

export const chatMethods = (d: ChatDeps) => [
  /** Shown to the person until the next message or 5 s (the chat page has no typing indicator yet). */
  method('sendChatAction', {
    params: z.object({ chat_id: chatId('chat_id', true), action: chatAction() }),
    async run({ bot }, p) {
      await d.conversations.privateChat(bot, p.chat_id!);
      return true as const;
    },
  }),

  /** In a private chat both the person and the bot are members; nobody else is. */
  method('getChatMember', {
    params: z.object({ chat_id: chatId('chat_id', true), user_id: id('user_id') }),
    async run({ bot }, p) {
      if (p.user_id === undefined || p.user_id <= 0) throw badRequest('invalid user_id specified');
      const { person } = await d.conversations.privateChat(bot, p.chat_id!);
      const user = p.user_id === person.id ? personUser(person) : p.user_id === bot.id ? botUser(bot) : undefined;
      if (!user) throw badRequest('member not found');
      return { status: 'member', user } as ChatMember;
    },
  }),

  /** forwardMessage: the copy names where it came from (forward_origin), its first origin when forwarded again. */
  method('forwardMessage', {
    params: z.object(repeat),
    writesTo: (p) => p.chat_id!,
    async run({ bot }, p) {
      const { person: from, m } = await source(d, bot, p.from_chat_id!, p.message_id, 'forward');
      const { person } = await d.conversations.privateChat(bot, p.chat_id!);
      const origin: MessageOrigin = m.content?.forward_origin ?? { type: 'user', date: m.date, sender_user: m.fromBot ? botUser(bot) : personUser(from) };
      const content: MessageContent = { ...(await media(d, m, person.id)), forward_origin: origin, ...(p.protect_content ? { has_protected_content: true } : {}) };
      const stored = await d.conversations.botWrites(bot, person, { text: m.text, entities: m.entities ?? [] }, { content });
      return (await d.conversations.messageFor(bot, person, stored)) as ApiResult<'forwardMessage'>;
    },
  }),

  /** copyMessage: the same text or media as a new message of the bot, a photo's or document's caption replaced when one is given; answers its id. */
  method('copyMessage', {
    params: z.object({ ...repeat, ...caption, reply_parameters: replyParameters(), reply_markup: replyMarkup() })
      .transform(refusing((p) => ({ ...p, formatted: p.caption === undefined ? undefined : messageCaption(p) }))),
    writesTo: (p) => p.chat_id!,
    async run({ bot }, p) {
      const { m } = await source(d, bot, p.from_chat_id!, p.message_id, 'copy');
      const { person } = await d.conversations.privateChat(bot, p.chat_id!);
      let replyTo: number | null = null;
      if (p.reply_parameters) {
        const target = await d.chats.getMessage(bot.id, person.id, p.reply_parameters.message_id);
        if (target) replyTo = target.messageId;
        else if (!p.reply_parameters.allow_sending_without_reply) throw badRequest('message to be replied not found');
      }
      const content = await media(d, m, person.id);
      const text = (content.photo || content.document) && p.formatted ? p.formatted : { text: m.text, entities: m.entities ?? [] };
      const stored = await d.conversations.botWrites(bot, person, text, {
        replyTo, replyMarkup: p.reply_markup ?? null, content: { ...content, ...(p.protect_content ? { has_protected_content: true } : {}) },
      });
      return { message_id: stored.messageId };
    },
  }),
];
