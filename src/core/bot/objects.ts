import type { Chat, ChatFullInfo, Message, User, UserFromGetMe } from '@grammyjs/types';
import { isInline } from './keyboards.js';
import type { BotRecord, Person, StoredMessage } from './ports.js';

/**
 * Who a Message is shown to: the bot sees only inline keyboards in
 * reply_markup (Bot API Message), the person every keyboard the bot sent,
 * so the chat client can show reply keyboards too.
 */
export type Viewer = 'bot' | 'person';

/**
 * Bot API objects exactly as the Telegram Bot API defines them (Message has
 * message_id, from, chat, date, text; User and private Chat their names).
 */

function names(p: Person): { first_name: string; last_name?: string } {
  const full = (p.name ?? '').trim();
  if (!full) return { first_name: p.username };
  const space = full.indexOf(' ');
  return space > 0 ? { first_name: full.slice(0, space), last_name: full.slice(space + 1).trim() } : { first_name: full };
}

export function personUser(p: Person): User {
  return { id: p.id, is_bot: false, ...names(p), username: p.username, language_code: 'en' };
}

export function botUser(b: BotRecord): User {
  return { id: b.id, is_bot: true, first_name: b.name, username: b.username };
}

export function getMeUser(b: BotRecord): UserFromGetMe {
  return {
    ...botUser(b),
    is_bot: true,
    username: b.username,
    can_join_groups: false,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
    can_manage_bots: false,
    supports_join_request_queries: false,
  };
}

/** A private chat's id is the person's id (Bot API, Chat). */
export function privateChat(p: Person): Chat.PrivateChat {
  return { id: p.id, ...names(p), username: p.username, type: 'private' };
}

export function chatFullInfo(p: Person): ChatFullInfo.PrivateChat {
  return {
    ...privateChat(p), accent_color_id: 0, max_reaction_count: 11,
    accepted_gift_types: { unlimited_gifts: false, limited_gifts: false, unique_gifts: false, premium_subscription: false, gifts_from_channels: false },
  } as ChatFullInfo.PrivateChat;
}

export function messageObject(m: StoredMessage, bot: BotRecord, person: Person, replyTo?: StoredMessage, viewer: Viewer = 'bot'): Message.TextMessage {
  const msg: Message.TextMessage = {
    message_id: m.messageId,
    from: m.fromBot ? botUser(bot) : personUser(person),
    chat: privateChat(person),
    date: m.date,
    text: m.text,
  } as Message.TextMessage;
  if (m.entities?.length) msg.entities = m.entities;
  if (m.content?.photo || m.content?.document) asMedia(msg);
  if (m.editDate !== null) msg.edit_date = m.editDate;
  if (replyTo) Object.assign(msg, { reply_to_message: messageObject(replyTo, bot, person, undefined, viewer) });
  if (m.content) Object.assign(msg, m.content);
  if (m.replyMarkup && (viewer === 'person' || isInline(m.replyMarkup))) Object.assign(msg, { reply_markup: m.replyMarkup });
  return msg;
}

/** A photo or document message: its stored text and entities are the caption (Bot API Message). */
function asMedia(msg: Message.TextMessage): void {
  const o = msg as Partial<Message.TextMessage> & Partial<Message.CaptionableMessage>;
  if (o.text) o.caption = o.text;
  if (o.entities) o.caption_entities = o.entities;
  delete o.text;
  delete o.entities;
}
