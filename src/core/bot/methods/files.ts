import type { MessageEntity } from '@grammyjs/types';
import { z } from 'zod';
import type { Conversations } from '../conversations.js';
import { badRequest } from '../errors.js';
import { documentObject, photoSizes, UploadedFile, type BotFiles, type FileSource } from '../files.js';
import type { ReplyMarkup } from '../keyboards.js';
import { method, type ApiResult } from '../method.js';
import { bool, chatId, field, id, refusing, replyMarkup, replyParameters, sendFlags, str } from '../params.js';
import { caption, messageCaption } from './edits.js';
import type { BotRecord, ChatStore, FileKind, MessageContent, Person, StoredFile } from '../ports.js';

type FileDeps = { conversations: Conversations; chats: ChatStore; files: BotFiles };
type CaptionParams = { caption?: string | undefined };

/** A file parameter: an upload (multipart), a file_id or an HTTP URL; anything else is refused as the Bot API's type error. */
const inputFile = (name: string, required: boolean) => field((v): FileSource | undefined => {
  if (v instanceof UploadedFile) return v;
  if (v !== undefined && typeof v !== 'string') throw badRequest(`field "${name}" must be of type InputFile or String`);
  if (v === undefined || !v.trim()) {
    if (required) throw badRequest(`there is no ${name} in the request`);
    return undefined;
  }
  return v;
});

const sendFields = {
  chat_id: chatId('chat_id', true),
  ...caption,
  show_caption_above_media: bool('show_caption_above_media'),
  reply_parameters: replyParameters(),
  reply_to_message_id: id('reply_to_message_id'),
  allow_sending_without_reply: bool('allow_sending_without_reply'),
  ...sendFlags,
  reply_markup: replyMarkup(),
};

/** Formats the caption while parsing, so every refusal of the parameters comes before the call runs. */
const withCaption = <P extends CaptionParams>(schema: z.ZodType<P>) => schema.transform(refusing((p: P) => ({ ...p, formatted: messageCaption(p) })));

const sendPhotoParams = withCaption(z.object({ ...sendFields, photo: inputFile('photo', true), has_spoiler: bool('has_spoiler') }));
/** thumbnail: only an upload (attach://…) is an InputFile; it is accepted and not shown. */
const thumbnail = field((v): UploadedFile | undefined => (v instanceof UploadedFile ? v : undefined));

const sendDocumentParams = withCaption(z.object({
  ...sendFields, document: inputFile('document', true), thumbnail,
  disable_content_type_detection: bool('disable_content_type_detection'),
}));

type SendParams = {
  chat_id?: number | string | undefined; formatted: { text: string; entities: MessageEntity[] }; reply_parameters?: { message_id: number; allow_sending_without_reply?: boolean | undefined } | undefined;
  reply_to_message_id?: number | undefined; allow_sending_without_reply?: boolean | undefined; protect_content?: boolean | undefined;
  show_caption_above_media?: boolean | undefined; reply_markup?: ReplyMarkup | undefined;
};

/** The message replied to: reply_parameters, or the older reply_to_message_id (0: none). */
async function replyTarget(d: FileDeps, bot: BotRecord, person: Person, p: SendParams): Promise<number | null> {
  const legacy = p.reply_to_message_id;
  const reply = p.reply_parameters ?? (legacy ? { message_id: legacy, allow_sending_without_reply: p.allow_sending_without_reply } : undefined);
  if (!reply) return null;
  const target = await d.chats.getMessage(bot.id, person.id, reply.message_id);
  if (target) return target.messageId;
  if (!reply.allow_sending_without_reply) throw badRequest('message to be replied not found');
  return null;
}

/** Stores the file (or finds it by file_id), lets the chat's person read it, and writes the message. */
async function sendFile(d: FileDeps, bot: BotRecord, signal: AbortSignal, p: SendParams, source: FileSource, kind: FileKind, media: (f: StoredFile) => MessageContent) {
  const { person } = await d.conversations.privateChat(bot, p.chat_id!);
  const replyTo = await replyTarget(d, bot, person, p);
  const f = await d.files.resolve(bot, source, kind, signal);
  await d.files.grant(f, person.id);
  const content: MessageContent = { ...media(f) };
  if (p.protect_content) content.has_protected_content = true;
  if (p.show_caption_above_media) content.show_caption_above_media = true;
  const m = await d.conversations.botWrites(bot, person, p.formatted, { replyTo, replyMarkup: p.reply_markup ?? null, content });
  return d.conversations.messageFor(bot, person, m);
}

export const fileMethods = (d: FileDeps) => [
  /** sendPhoto: PNG, JPEG, GIF or WebP up to 10 MB (5 MB by URL), its size read from the image header. */
  method('sendPhoto', {
    params: sendPhotoParams,
    takesFiles: true,
    writesTo: (p) => p.chat_id!,
    async run({ bot, signal }, p) {
      const media = (f: StoredFile): MessageContent => ({ photo: photoSizes(f), ...(p.has_spoiler ? { has_media_spoiler: true as const } : {}) });
      return (await sendFile(d, bot, signal, p, p.photo!, 'photo', media)) as unknown as ApiResult<'sendPhoto'>;
    },
  }),

  /** sendDocument: any file up to 50 MB (20 MB by URL); a thumbnail is accepted and not shown. */
  method('sendDocument', {
    params: sendDocumentParams,
    takesFiles: true,
    writesTo: (p) => p.chat_id!,
    async run({ bot, signal }, p) {
      return (await sendFile(d, bot, signal, p, p.document!, 'document', (f) => ({ document: documentObject(f) }))) as unknown as ApiResult<'sendDocument'>;
    },
  }),

  /** getFile: the path to download at `/file/bot<token>/<file_path>` (files up to 20 MB). */
  method('getFile', {
    params: z.object({ file_id: str('file_id') }),
    run: async ({ bot }, p) => d.files.getFile(bot, p.file_id),
  }),
];
