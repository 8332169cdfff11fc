import type { MessageEntity, ParseMode, ReplyParameters, Update } from '@grammyjs/types';
import { z } from 'zod';
import { GatehouseError } from '../errors.js';
import { badRequest, botError } from './errors.js';
import type { InlineKeyboardMarkup, LinkPreviewOptions } from '@grammyjs/types';
import { isInline, parseReplyMarkup, type ReplyMarkup } from './keyboards.js';

/**
 * Method parameters as the HTTP edge merged them (query string, then form,
 * JSON or multipart body). JSON bodies bring numbers, booleans and nested
 * objects; the others bring strings, where nested objects arrive as JSON text.
 * Each method declares what it reads with the fields below (its entry's
 * `params` schema), so a method only ever sees the types it expects.
 */
export type BotParams = Record<string, unknown>;

/**
 * A parsing step whose GatehouseError becomes an issue of the parse (the first
 * one is the answer), so a refusal names the first bad parameter in
 * declaration order. Other errors propagate.
 */
export function refusing<I, O>(step: (v: I) => O) {
  return (v: I, ctx: z.RefinementCtx): O => {
    try {
      return step(v);
    } catch (e) {
      if (!(e instanceof GatehouseError)) throw e;
      ctx.addIssue({ code: 'custom', message: e.description ?? '', params: { code: e.status } });
      return z.NEVER;
    }
  };
}

/** A field reader: it gets `undefined` when the parameter is absent or null. */
export function field<T>(read: (v: unknown) => T) {
  return z.unknown().optional().transform(refusing((v: unknown) => read(v === null ? undefined : v)));
}

/** Parses raw parameters with a method's schema; the first issue is the Bot API error. */
export function parseParams<T>(schema: z.ZodType<T>, raw: BotParams): T {
  const r = schema.safeParse(raw);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const code = issue?.code === 'custom' ? (issue.params as { code?: number } | undefined)?.code : undefined;
  throw issue?.code === 'custom' ? botError(code ?? 400, issue.message || undefined) : badRequest("can't parse parameters");
}

const isObject = (v: unknown) => typeof v === 'object' && v !== null;
// tdlib's JSON wording, which the official server passes on (e.g. `Field "text" must be of type String`).
const wrongType = (name: string, type: string) => badRequest(`field "${name}" must be of type ${type}`);

/**
 * A string. Numbers and booleans in a JSON body are taken as their text, as
 * the official server takes them; objects and arrays are refused.
 */
export const str = (name: string) => field((v): string | undefined => {
  if (v === undefined || typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw wrongType(name, 'String');
});

/** A scalar: objects and arrays (JSON bodies) are refused as the wrong type. */
function scalar(v: unknown, name: string, type: string): string | number | boolean | undefined {
  if (isObject(v)) throw wrongType(name, type);
  return v as string | number | boolean | undefined;
}

/**
 * Integers are read leniently, as the official server does: a leading
 * integer is taken, anything else counts as 0. Absent: undefined (the
 * method's default applies).
 */
export const int = (name: string) => field((v): number | undefined => {
  const s = scalar(v, name, 'Integer');
  if (s === undefined || s === '') return undefined;
  // A JSON number beyond 2^53 reads as 0, as the same digits in a string do (the stores take only safe integers).
  if (typeof s === 'number') return Number.isSafeInteger(Math.trunc(s)) ? Math.trunc(s) : 0;
  if (typeof s === 'boolean') return s ? 1 : 0;
  const m = /^\s*([+-]?\d+)/.exec(s);
  const n = m ? Number(m[1]) : 0;
  return Number.isSafeInteger(n) ? n : 0;
});

/** A strict integer (identifiers), undefined when absent or not an integer. */
export const id = (name: string) => field((v): number | undefined => {
  const s = scalar(v, name, 'Integer');
  if (typeof s === 'number') return Number.isSafeInteger(s) ? s : undefined;
  if (typeof s === 'string' && /^\s*-?\d{1,16}\s*$/.test(s)) return Number(s);
  return undefined;
});

export const bool = (name: string) => field((v): boolean => {
  const s = scalar(v, name, 'Boolean');
  if (typeof s === 'boolean') return s;
  if (typeof s === 'number') return s !== 0;
  if (typeof s === 'string') return ['true', '1', 'yes', 'on'].includes(s.trim().toLowerCase());
  return false;
});

/** Nested objects may come as objects (JSON body) or as JSON strings (form, query). */
function decoded(v: unknown, what: string): unknown {
  if (v === undefined || v === '') return undefined;
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    throw badRequest(`can't parse ${what} JSON object`);
  }
}

/** A JSON value whose structure `check` reads (and refuses in its own words). */
export const json = <T>(what: string, check: (v: unknown) => T) => field((v): T | undefined => {
  const value = decoded(v, what);
  return value === undefined ? undefined : check(value);
});

/** A list of strings (allowed_updates); undefined when absent. */
export const updateTypes = (name: string) => json(name, (v) => {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw badRequest(`can't parse ${name} JSON array`);
  return v as Exclude<keyof Update, 'update_id'>[];
});

/** chat_id: an integer, or `@username` (kept with its `@`); `required` refuses it absent. */
export const chatId = (name: string, required: boolean) => field((v): number | string | undefined => {
  if (v === undefined || v === '') {
    if (required) throw badRequest(`${name} is empty`);
    return undefined;
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw badRequest('chat not found');
    return v;
  }
  if (isObject(v)) throw wrongType(name, 'Integer or String');
  const s = String(v).trim();
  if (/^-?\d{1,16}$/.test(s)) return Number(s);
  if (/^@[A-Za-z0-9_]{1,64}$/.test(s)) return s;
  throw badRequest('chat not found');
});

const PARSE_MODES: ReadonlyMap<string, ParseMode> = new Map([['html', 'HTML'], ['markdownv2', 'MarkdownV2'], ['markdown', 'Markdown']]);

/** parse_mode: HTML, MarkdownV2 or Markdown, case-insensitive. */
export const parseMode = (name: string) => field((v): ParseMode | undefined => {
  const s = scalar(v, name, 'String');
  const mode = String(s ?? '').trim().toLowerCase();
  if (!mode) return undefined;
  const known = PARSE_MODES.get(mode);
  if (!known) throw badRequest('unsupported parse_mode');
  return known;
});

const ENTITY_TYPES = new Set(['mention', 'hashtag', 'cashtag', 'bot_command', 'url', 'email', 'phone_number', 'bold', 'italic', 'underline',
  'strikethrough', 'spoiler', 'blockquote', 'expandable_blockquote', 'code', 'pre', 'text_link', 'text_mention', 'custom_emoji']);

/** Explicit `entities` (instead of parse_mode): checked, not trusted; only the fields we keep are copied. */
export const entities = () => json('message entities', (raw): MessageEntity[] => {
  if (!Array.isArray(raw)) throw badRequest("can't parse entities JSON object");
  return raw.map((e: unknown, i) => {
    const o = (isObject(e) ? e : {}) as Record<string, unknown>;
    if (typeof o.type !== 'string' || !Number.isInteger(o.offset) || !Number.isInteger(o.length)) {
      throw badRequest(`can't parse entities: entity ${i} is malformed`);
    }
    if (!ENTITY_TYPES.has(o.type)) throw badRequest(`can't parse entities: unsupported entity type "${o.type.slice(0, 64)}"`);
    const out: Record<string, unknown> = { type: o.type, offset: o.offset, length: o.length };
    if (o.type === 'text_link') {
      if (typeof o.url !== 'string' || !/^(https?|tg):/i.test(o.url)) throw badRequest('wrong HTTP URL specified');
      out.url = o.url;
    }
    if (o.type === 'pre' && typeof o.language === 'string') out.language = o.language;
    if (o.type === 'custom_emoji' && typeof o.custom_emoji_id === 'string') out.custom_emoji_id = o.custom_emoji_id;
    return out as unknown as MessageEntity;
  });
});

const replyFields = z.object({ message_id: id('message_id'), allow_sending_without_reply: bool('allow_sending_without_reply') });

/** reply_parameters (object or JSON): the message replied to. */
export const replyParameters = () => json('reply parameters', (rp): ReplyParameters & { message_id: number } => {
  if (!isObject(rp) || Array.isArray(rp)) throw badRequest("can't parse reply parameters JSON object");
  const o = parseParams(replyFields, rp as BotParams);
  if (o.message_id === undefined) throw badRequest('message to be replied not found');
  return { message_id: o.message_id, allow_sending_without_reply: o.allow_sending_without_reply };
});

/** reply_markup (object or JSON): an inline or reply keyboard, its removal, or a forced reply (keyboards.ts). */
export const replyMarkup = () => field((v): ReplyMarkup | undefined => {
  const value = decoded(v, 'reply keyboard markup');
  return value === undefined ? undefined : parseReplyMarkup(value);
});

/** reply_markup of an edit: only an inline keyboard can be attached to a sent message. */
export const inlineMarkup = () => field((v): InlineKeyboardMarkup | undefined => {
  const value = decoded(v, 'reply keyboard markup');
  const m = value === undefined ? undefined : parseReplyMarkup(value);
  if (m && !isInline(m)) throw badRequest('inline keyboard expected');
  return m;
});

/** disable_notification (accepted: the chat page has no notifications to silence) and protect_content. */
export const sendFlags = { disable_notification: bool('disable_notification'), protect_content: bool('protect_content') };

const PREVIEW_FLAGS = ['is_disabled', 'prefer_small_media', 'prefer_large_media', 'show_above_text'] as const;

/** link_preview_options (object or JSON): kept on the message as given (no previews are generated). */
export const linkPreviewOptions = () => json('link preview options', (v): LinkPreviewOptions => {
  if (!isObject(v) || Array.isArray(v)) throw badRequest("can't parse link preview options JSON object");
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const name of PREVIEW_FLAGS) {
    if (o[name] === undefined) continue;
    if (typeof o[name] !== 'boolean') throw badRequest(`field "${name}" must be of type Boolean`);
    if (o[name]) out[name] = true;
  }
  if (o.url !== undefined) {
    if (typeof o.url !== 'string') throw badRequest('field "url" must be of type String');
    if (o.url) out.url = o.url;
  }
  return out as LinkPreviewOptions;
});
