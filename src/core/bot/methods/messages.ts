import type { Message } from '@grammyjs/types';
import { badRequest, tooManyRequests } from '../errors.js';
import { formatText, trimFormatted, type FormattedText } from '../format.js';
import type { MethodContext } from '../methods.js';
import { bool, chatRef, id, json, type BotParams } from '../params.js';
import { MAX_TEXT, secs } from '../service.js';
import { topics } from '../wakeups.js';

/** Text after entity parsing: 1–4096 characters (UTF-16 code units, as entity offsets). */
function messageText(p: BotParams): FormattedText {
  const f = trimFormatted(formatText(p));
  if (!f.text) throw badRequest('message text is empty');
  if (f.text.length > MAX_TEXT) throw badRequest('message is too long');
  return f;
}

/** reply_parameters (object or JSON) or the older reply_to_message_id. */
function replyTarget(p: BotParams): { messageId: number; allowWithout: boolean } | undefined {
  const rp = json(p, 'reply_parameters', 'reply parameters');
  if (rp !== undefined) {
    if (!rp || typeof rp !== 'object' || Array.isArray(rp)) throw badRequest("can't parse reply parameters JSON object");
    const o = rp as Record<string, unknown>;
    const messageId = id(o, 'message_id');
    if (messageId === undefined) throw badRequest('message to be replied not found');
    return { messageId, allowWithout: bool(o, 'allow_sending_without_reply') };
  }
  const legacy = id(p, 'reply_to_message_id');
  return legacy === undefined || legacy === 0 ? undefined : { messageId: legacy, allowWithout: bool(p, 'allow_sending_without_reply') };
}

/** sendMessage: markup is parsed before the chat is looked up, as the official server does. */
export async function sendMessage({ service, bot }: MethodContext, p: BotParams): Promise<Message.TextMessage> {
  const ref = chatRef(p);
  const f = messageText(p);
  const reply = replyTarget(p);
  const { person } = await service.privateChat(bot, ref);
  let replyTo: number | null = null;
  if (reply) {
    const target = await service.deps.storage.chats.getMessage(bot.id, person.id, reply.messageId);
    if (target) replyTo = target.messageId;
    else if (!reply.allowWithout) throw badRequest('message to be replied not found');
  }
  // disable_notification is accepted; the chat page has no notifications to silence.
  const retryAfter = service.flood.take(bot.id, person.id);
  if (retryAfter) throw tooManyRequests(retryAfter);
  const m = await service.botWrites(bot, person, f, replyTo);
  return service.messageFor(bot, person, m);
}

async function target(ctx: MethodContext, p: BotParams, what: 'edit' | 'delete') {
  if (p.inline_message_id !== undefined && p.chat_id === undefined) throw badRequest(`message to ${what} not found`);
  const ref = chatRef(p);
  const messageId = id(p, 'message_id');
  if (messageId === undefined) throw badRequest(`message identifier is not specified`);
  const { person } = await ctx.service.privateChat(ctx.bot, ref);
  const m = await ctx.service.deps.storage.chats.getMessage(ctx.bot.id, person.id, messageId);
  if (!m) throw badRequest(`message to ${what} not found`);
  return { person, m };
}

export async function editMessageText(ctx: MethodContext, p: BotParams): Promise<Message.TextMessage> {
  const { service, bot } = ctx;
  const f = messageText(p);
  const { person, m } = await target(ctx, p, 'edit');
  if (!m.fromBot) throw badRequest("message can't be edited");
  if (m.text === f.text && JSON.stringify(m.entities ?? []) === JSON.stringify(f.entities)) {
    throw badRequest('message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
  }
  const editDate = secs(service.deps.clock.now());
  await service.deps.storage.chats.editMessage(bot.id, person.id, m.messageId, { text: f.text, entities: f.entities.length ? f.entities : null, editDate });
  service.deps.wakeups.publish(topics.chat(bot.id, person.id), String(m.messageId));
  return service.messageFor(bot, person, { ...m, text: f.text, entities: f.entities.length ? f.entities : null, editDate });
}

/** In private chats a bot may delete both sides' messages (within 48 hours, Bot API deleteMessage). */
export async function deleteMessage(ctx: MethodContext, p: BotParams): Promise<true> {
  const { service, bot } = ctx;
  const { person, m } = await target(ctx, p, 'delete');
  if (service.deps.clock.now() / 1000 - m.date > 48 * 3600) throw badRequest("message can't be deleted");
  await service.deps.storage.chats.deleteMessage(bot.id, person.id, m.messageId);
  service.deps.wakeups.publish(topics.chat(bot.id, person.id), String(m.messageId));
  return true;
}
