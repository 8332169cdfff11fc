import type { LinkPreviewOptions, MessageEntity, ParseMode } from '@grammyjs/types';
import { z } from 'zod';
import { MAX_TEXT, type Conversations } from '../conversations.js';
import { badRequest } from '../errors.js';
import { formatText, trimFormatted, type FormattedText } from '../format.js';
import { method } from '../method.js';
import { messageObject } from '../objects.js';
import { bool, chatId, entities, id, linkPreviewOptions, parseMode, refusing, replyMarkup, replyParameters, sendFlags, str } from '../params.js';
import type { BotRecord, ChatStore, MessageContent } from '../ports.js';

/** Text after entity parsing: 1–4096 characters (UTF-16 code units, as entity offsets). */
type TextParams = { text?: string | undefined; parse_mode?: ParseMode | undefined; entities?: MessageEntity[] | undefined };

function messageText(p: TextParams): FormattedText {
  const f = trimFormatted(formatText(p.text ?? '', p.parse_mode, p.entities));
  if (!f.text) throw badRequest('message text is empty');
  if (f.text.length > MAX_TEXT) throw badRequest('message is too long');
  return f;
}

/** Formats the text while parsing, so every refusal of the parameters comes before the call runs. */
export const withText = <P extends TextParams>(schema: z.ZodType<P>) => schema.transform(refusing((p: P) => ({ ...p, formatted: messageText(p) })));

export const text = { text: str('text'), parse_mode: parseMode('parse_mode'), entities: entities() };

const sendMessageParams = withText(z.object({
  chat_id: chatId('chat_id', true),
  ...text,
  reply_parameters: replyParameters(),
  reply_to_message_id: id('reply_to_message_id'),
  allow_sending_without_reply: bool('allow_sending_without_reply'),
  ...sendFlags,
  link_preview_options: linkPreviewOptions(),
  disable_web_page_preview: bool('disable_web_page_preview'),
  reply_markup: replyMarkup(),
}));

/** What protect_content and link preview options leave on the message (Bot API Message fields). */
function sendOptions(p: { protect_content?: boolean | undefined; link_preview_options?: LinkPreviewOptions | undefined; disable_web_page_preview?: boolean }): MessageContent {
  const content: MessageContent = {};
  if (p.protect_content) content.has_protected_content = true;
  const preview = p.link_preview_options ?? (p.disable_web_page_preview ? { is_disabled: true } : undefined);
  if (preview && Object.keys(preview).length) content.link_preview_options = preview;
  return content;
}

/** sendMessage: markup is parsed before the chat is looked up, as the official server does. */
export const sendMessage = (d: { conversations: Conversations; chats: ChatStore }) => method('sendMessage', {
  params: sendMessageParams,
  writesTo: (p) => p.chat_id!,
  async run({ bot }, p) {
    // reply_parameters, or the older reply_to_message_id (0: none).
    const legacy = p.reply_to_message_id;
    const reply = p.reply_parameters ?? (legacy ? { message_id: legacy, allow_sending_without_reply: p.allow_sending_without_reply } : undefined);
    const opts = { replyMarkup: p.reply_markup ?? null, content: sendOptions(p) };
    // The common case, a chat by id and no reply: the write finds the chat (or answers "chat not found") and reads nothing before.
    if (typeof p.chat_id === 'number' && !reply) {
      const { person, message } = await d.conversations.botWritesTo(bot, p.chat_id, p.formatted, opts);
      return messageObject(message, bot, person);
    }
    const { person } = await d.conversations.privateChat(bot, p.chat_id!);
    let replyTo: number | null = null;
    if (reply) {
      const target = await d.chats.getMessage(bot.id, person.id, reply.message_id);
      if (target) replyTo = target.messageId;
      else if (!reply.allow_sending_without_reply) throw badRequest('message to be replied not found');
    }
    const m = await d.conversations.botWrites(bot, person, p.formatted, { ...opts, replyTo });
    return d.conversations.messageFor(bot, person, m);
  },
});

export const target = { chat_id: chatId('chat_id', false), message_id: id('message_id') };

/** The message an edit or delete names, in the bot's private chat. */
export async function targetMessage(d: { conversations: Conversations; chats: ChatStore }, bot: BotRecord, p: { chat_id?: number | string | undefined; message_id?: number | undefined; inline_message_id?: string | undefined }, what: 'edit' | 'delete') {
  if (p.inline_message_id !== undefined && p.chat_id === undefined) throw badRequest(`message to ${what} not found`);
  if (p.chat_id === undefined) throw badRequest('chat_id is empty');
  if (p.message_id === undefined) throw badRequest('message identifier is not specified');
  const { person } = await d.conversations.privateChat(bot, p.chat_id);
  const m = await d.chats.getMessage(bot.id, person.id, p.message_id);
  if (!m) throw badRequest(`message to ${what} not found`);
  return { person, m };
}
