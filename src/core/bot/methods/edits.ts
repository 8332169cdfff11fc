import type { MessageEntity, ParseMode } from '@grammyjs/types';
import { z } from 'zod';
import type { Clock } from '../../ports.js';
import { secs, type Conversations } from '../conversations.js';
import { badRequest } from '../errors.js';
import { formatText, trimFormatted, type FormattedText } from '../format.js';
import { isInline } from '../keyboards.js';
import { method, type ApiResult } from '../method.js';
import { entities, inlineMarkup, parseMode, refusing, str } from '../params.js';
import type { BotRecord, ChatStore, MessagePatch, Person, StoredMessage } from '../ports.js';
import { chatChange, topics, type Wakeups } from '../wakeups.js';
import { target, targetMessage, text, withText } from './messages.js';

type EditDeps = { conversations: Conversations; chats: ChatStore; wakeups: Wakeups; clock: Clock };

const NOT_MODIFIED = 'message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message';
/** Bot API: captions are 0–1024 characters after entity parsing. */
export const MAX_CAPTION = 1024;

const inlineOf = (m: StoredMessage) => (isInline(m.replyMarkup) ? m.replyMarkup : null);
const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

async function editable(d: EditDeps, bot: BotRecord, p: Parameters<typeof targetMessage>[2]) {
  const found = await targetMessage(d, bot, p, 'edit');
  if (!found.m.fromBot) throw badRequest("message can't be edited");
  return found;
}

/** Stores the edit, wakes the person's polls, and answers with the edited Message. */
async function applyEdit(d: EditDeps, bot: BotRecord, person: Person, m: StoredMessage, patch: MessagePatch) {
  await d.chats.editMessage(bot.id, person.id, m.messageId, patch);
  d.wakeups.publish(topics.chat(bot.id, person.id), chatChange.edited(m.messageId));
  const { replyMarkup, ...rest } = patch;
  return d.conversations.messageFor(bot, person, { ...m, ...rest, ...(replyMarkup !== undefined ? { replyMarkup } : {}) });
}

/** Edits attach only inline keyboards (an edit cannot show a reply keyboard). */
const markup = { reply_markup: inlineMarkup() };

/**
 * editMessageText: new text, and the inline keyboard given (none given
 * removes the message's inline keyboard, as on Telegram); edit_date is set.
 */
export const editMessageText = (d: EditDeps) => method('editMessageText', {
  params: withText(z.object({ ...target, inline_message_id: str('inline_message_id'), ...text, ...markup })),
  async run({ bot }, p) {
    const f = p.formatted;
    const next = p.reply_markup ?? null;
    const { person, m } = await editable(d, bot, p);
    if (m.text === f.text && same(m.entities ?? [], f.entities) && same(inlineOf(m), next)) throw badRequest(NOT_MODIFIED);
    const patch: MessagePatch = { text: f.text, entities: f.entities.length ? f.entities : null, editDate: secs(d.clock.now()) };
    // A reply keyboard the message brought stays with the person; an inline one is replaced.
    if (next || isInline(m.replyMarkup)) patch.replyMarkup = next;
    return (await applyEdit(d, bot, person, m, patch)) as ApiResult<'editMessageText'>;
  },
});

/** editMessageReplyMarkup: only the buttons change, so edit_date stays as it was (Telegram hides such edits). */
export const editMessageReplyMarkup = (d: EditDeps) => method('editMessageReplyMarkup', {
  params: z.object({ ...target, inline_message_id: str('inline_message_id'), ...markup }),
  async run({ bot }, p) {
    const next = p.reply_markup ?? null;
    const { person, m } = await editable(d, bot, p);
    if (same(inlineOf(m), next)) throw badRequest(NOT_MODIFIED);
    const patch: MessagePatch = { text: m.text, entities: m.entities, editDate: m.editDate, replyMarkup: next };
    return (await applyEdit(d, bot, person, m, patch)) as ApiResult<'editMessageReplyMarkup'>;
  },
});

type CaptionParams = { caption?: string | undefined; parse_mode?: ParseMode | undefined; caption_entities?: MessageEntity[] | undefined };

/** A caption after entity parsing (0–1024 characters). */
export function messageCaption(p: CaptionParams): FormattedText {
  const f = trimFormatted(formatText(p.caption ?? '', p.parse_mode, p.caption_entities));
  if (f.text.length > MAX_CAPTION) throw badRequest('message caption is too long');
  return f;
}

export const caption = { caption: str('caption'), parse_mode: parseMode('parse_mode'), caption_entities: entities() };

/**
 * editMessageCaption: photos and documents have a caption (the message's
 * stored text, objects.ts); an empty one removes it. Text messages have none.
 */
export const editMessageCaption = (d: EditDeps) => method('editMessageCaption', {
  params: z.object({ ...target, inline_message_id: str('inline_message_id'), ...caption, ...markup })
    .transform(refusing((p) => ({ ...p, formatted: messageCaption(p) }))),
  async run({ bot }, p) {
    const f = p.formatted;
    const next = p.reply_markup ?? null;
    const { person, m } = await editable(d, bot, p);
    if (!m.content?.photo && !m.content?.document) throw badRequest('there is no caption in the message to edit');
    if (m.text === f.text && same(m.entities ?? [], f.entities) && same(inlineOf(m), next)) throw badRequest(NOT_MODIFIED);
    const patch: MessagePatch = { text: f.text, entities: f.entities.length ? f.entities : null, editDate: secs(d.clock.now()) };
    if (next || isInline(m.replyMarkup)) patch.replyMarkup = next;
    return (await applyEdit(d, bot, person, m, patch)) as ApiResult<'editMessageCaption'>;
  },
});

/** In private chats a bot may delete both sides' messages (within 48 hours, Bot API deleteMessage). */
export const deleteMessage = (d: EditDeps) => method('deleteMessage', {
  params: z.object(target),
  async run({ bot }, p) {
    const { person, m } = await targetMessage(d, bot, p, 'delete');
    if (d.clock.now() / 1000 - m.date > 48 * 3600) throw badRequest("message can't be deleted");
    await d.chats.deleteMessage(bot.id, person.id, m.messageId);
    d.wakeups.publish(topics.chat(bot.id, person.id), chatChange.deleted(m.messageId));
    return true;
  },
});
