import type { ForceReply, InlineKeyboardButton, InlineKeyboardMarkup, KeyboardButton, ReplyKeyboardMarkup, ReplyKeyboardRemove } from '@grammyjs/types';
import { badRequest } from './errors.js';

export type ReplyMarkup = InlineKeyboardMarkup | ReplyKeyboardMarkup | ReplyKeyboardRemove | ForceReply;

/** Bot API limits of InlineKeyboardButton.callback_data: 1–64 bytes. */
export const MAX_CALLBACK_DATA = 64;

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const typeName = (v: unknown) => (Array.isArray(v) ? 'Array' : v === null ? 'Null' : typeof v === 'object' ? 'Object' : typeof v);

/**
 * A refusal worded as the official server words it (telegram-bot-api's
 * Client::get_reply_markup, where the first letter of the description is
 * lowered): the parts here keep their capitals, since only the start of
 * the whole description is lowered.
 */
class Refusal extends Error {}

function requiredString(o: Obj, name: string): string {
  if (!Object.hasOwn(o, name)) throw new Refusal(`Can't find field "${name}"`);
  const v = o[name];
  if (typeof v !== 'string') throw new Refusal(`Field "${name}" must be of type String`);
  return v;
}

function objectField(o: Obj, name: string): Obj {
  const v = o[name];
  if (!isObject(v)) throw new Refusal(`Field "${name}" must be of type Object`);
  return v;
}

function httpsUrl(o: Obj, name: string): string {
  const url = requiredString(objectField(o, name), 'url');
  if (!/^https:\/\/[^\s/]+/i.test(url)) throw badRequest('BUTTON_URL_INVALID');
  return url;
}

/** A URL button opens http(s) and tg: links (Bot API, InlineKeyboardButton.url). */
function buttonUrl(url: string): string {
  if (!/^(https?:\/\/[^\s/?#]+|tg:\/\/\S+)\S*$/i.test(url) || url.length > 2048) throw badRequest('BUTTON_URL_INVALID');
  return url;
}

function inlineButton(v: unknown): InlineKeyboardButton {
  if (!isObject(v)) throw new Refusal('InlineKeyboardButton must be an Object');
  const text = requiredString(v, 'text');
  if ('url' in v) return { text, url: buttonUrl(requiredString(v, 'url')) };
  if ('callback_data' in v) {
    const data = requiredString(v, 'callback_data');
    const bytes = Buffer.byteLength(data, 'utf8');
    if (bytes < 1 || bytes > MAX_CALLBACK_DATA) throw badRequest('BUTTON_DATA_INVALID');
    return { text, callback_data: data };
  }
  if ('web_app' in v) return { text, web_app: { url: httpsUrl(v, 'web_app') } };
  if ('login_url' in v) {
    const login = objectField(v, 'login_url');
    const url = requiredString(login, 'url');
    if (!/^https:\/\//i.test(url)) throw badRequest('BUTTON_URL_INVALID');
    return { text, login_url: { url } };
  }
  if ('copy_text' in v) {
    const copy = requiredString(objectField(v, 'copy_text'), 'text');
    if (!copy || copy.length > 256) throw badRequest('COPY_TEXT_INVALID');
    return { text, copy_text: { text: copy } };
  }
  for (const name of ['switch_inline_query', 'switch_inline_query_current_chat'] as const) {
    if (Object.hasOwn(v, name)) return { text, [name]: requiredString(v, name) } as unknown as InlineKeyboardButton;
  }
  throw new Refusal('Text buttons are unallowed in the inline keyboard');
}

function keyboardButton(v: unknown): KeyboardButton {
  if (typeof v === 'string') return { text: v };
  if (!isObject(v)) throw new Refusal('KeyboardButton must be a String or an Object');
  const text = requiredString(v, 'text');
  for (const name of ['request_contact', 'request_location'] as const) {
    if (Object.hasOwn(v, name)) {
      if (typeof v[name] !== 'boolean') throw new Refusal(`Field "${name}" must be of type Boolean`);
      if (v[name]) return { text, [name]: true } as KeyboardButton;
    }
  }
  if ('web_app' in v) return { text, web_app: { url: httpsUrl(v, 'web_app') } };
  return { text };
}

function rows<B>(value: unknown, field: string, markup: string, what: string, button: (v: unknown) => B): B[][] {
  if (!Array.isArray(value)) throw badRequest(`field "${field}" of the ${markup} must be an Array`);
  return value.map((row: unknown) => {
    if (!Array.isArray(row)) throw badRequest(`field "${field}" of the ${markup} must be an Array of Arrays`);
    return row.map((b: unknown) => {
      try {
        return button(b);
      } catch (e) {
        if (e instanceof Refusal) throw badRequest(`can't parse ${what} button: ${e.message}`);
        throw e;
      }
    });
  });
}

/** The markup's boolean fields, and the object the official server names in their errors. A Map: the names come from the request. */
const FLAGS = new Map<string, string>([
  ['resize_keyboard', 'ReplyKeyboardMarkup'], ['one_time_keyboard', 'ReplyKeyboardMarkup'], ['is_persistent', 'ReplyKeyboardMarkup'],
  ['selective', 'ReplyKeyboardMarkup'], ['remove_keyboard', 'ReplyKeyboardRemove'], ['force_reply', 'ForceReply'],
]);

/**
 * reply_markup as the official server reads it: the first of `keyboard`,
 * `inline_keyboard`, `remove_keyboard`, `force_reply` that is set wins; an
 * empty keyboard is no markup (undefined). Only the fields the Bot API
 * defines are kept.
 */
export function parseReplyMarkup(value: unknown): ReplyMarkup | undefined {
  if (!isObject(value)) throw badRequest('object expected as reply markup');
  const flags = new Map<string, boolean>();
  let keyboard: KeyboardButton[][] = [];
  let inline: InlineKeyboardButton[][] = [];
  let placeholder: string | undefined;
  for (const [name, v] of Object.entries(value)) {
    if (name === 'keyboard') keyboard = rows(v, name, 'ReplyKeyboardMarkup', 'keyboard', keyboardButton);
    else if (name === 'inline_keyboard') inline = rows(v, name, 'InlineKeyboardMarkup', 'inline keyboard', inlineButton);
    else if (FLAGS.has(name)) {
      if (typeof v !== 'boolean') throw badRequest(`field "${name}" of the ${FLAGS.get(name)!} must be of the type Boolean`);
      flags.set(name, v);
    } else if (name === 'input_field_placeholder') {
      if (typeof v !== 'string') throw badRequest(`field "${name}" must be of the type String, not ${typeName(v)}`);
      if (v.length > 64) throw badRequest('input field placeholder is too long');
      placeholder = v;
    }
  }
  const opt = (name: string) => (flags.get(name) ? { [name]: true } : {});
  const place = placeholder ? { input_field_placeholder: placeholder } : {};
  const rowsLeft = keyboard.filter((r) => r.length);
  if (rowsLeft.length) {
    return { keyboard: rowsLeft, ...opt('is_persistent'), ...opt('resize_keyboard'), ...opt('one_time_keyboard'), ...place, ...opt('selective') } as ReplyKeyboardMarkup;
  }
  const inlineLeft = inline.filter((r) => r.length);
  if (inlineLeft.length) return { inline_keyboard: inlineLeft };
  if (flags.get('remove_keyboard')) return { remove_keyboard: true, ...opt('selective') };
  if (flags.get('force_reply')) return { force_reply: true, ...place, ...opt('selective') };
  return undefined;
}

export const isInline = (m: ReplyMarkup | null | undefined): m is InlineKeyboardMarkup => !!m && 'inline_keyboard' in m;

/** The callback button of a message's inline keyboard that carries `data`, if any. */
export function callbackButton(m: ReplyMarkup | null | undefined, data: string): InlineKeyboardButton.CallbackButton | undefined {
  if (!isInline(m)) return undefined;
  for (const row of m.inline_keyboard) {
    for (const b of row) if ('callback_data' in b && b.callback_data === data) return b;
  }
  return undefined;
}
