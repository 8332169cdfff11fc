import type { BotCommand, BotCommandScope, LanguageCode } from '@grammyjs/types';
import { z } from 'zod';
import type { Conversations } from '../conversations.js';
import { badRequest } from '../errors.js';
import { method } from '../method.js';
import { field, json, str } from '../params.js';
import type { BotProfileStore, BotRecord, BotStore, ProfileField } from '../ports.js';

/** Bot API setMyCommands: at most 100 commands of 1–32 characters, descriptions of 1–256. */
export const MAX_COMMANDS = 100;
const MAX_COMMAND = 32;
const MAX_DESCRIPTION = 256;
/** setMyName 0–64, setMyDescription 0–512, setMyShortDescription 0–120 characters. */
export const PROFILE_LIMITS: Record<ProfileField, number> = { name: 64, description: 512, short_description: 120 };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** language_code: empty (every language without its own value) or a two-letter ISO 639-1 code. */
const languageCode = () => field((v): LanguageCode | undefined => {
  if (v !== undefined && typeof v !== 'string') throw badRequest('field "language_code" must be of type String');
  const code = (v ?? '').trim();
  if (code === '') return undefined;
  if (/^[a-z]{2}$/i.test(code)) return code.toLowerCase() as LanguageCode;
  throw badRequest('invalid language code specified');
});

/** Validates a BotCommand list as setMyCommands does (BotFather's /setcommands uses it too). */
export function botCommands(v: unknown): BotCommand[] {
  if (!Array.isArray(v)) throw badRequest('expected an Array of BotCommand');
  if (v.length > MAX_COMMANDS) throw badRequest('BOT_COMMANDS_TOO_MUCH');
  return v.map((c: unknown) => {
    if (!isObject(c)) throw badRequest('expected BotCommand');
    for (const name of ['command', 'description'] as const) {
      if (typeof c[name] !== 'string') throw badRequest(`field "${name}" must be of type String`);
    }
    const command = (c.command as string).trim().replace(/^\//, '');
    const description = (c.description as string).trim();
    if (!command) throw badRequest('command must be non-empty');
    if (command.length > MAX_COMMAND) throw badRequest(`command length must not exceed ${MAX_COMMAND}`);
    if (!description) throw badRequest('command description must be non-empty');
    if (description.length > MAX_DESCRIPTION) throw badRequest(`command description length must not exceed ${MAX_DESCRIPTION}`);
    if (!/^[a-z0-9_]+$/.test(command)) throw badRequest('BOT_COMMAND_INVALID');
    return { command, description };
  });
}

const SCOPE_TYPES = new Set(['default', 'all_private_chats', 'all_group_chats', 'all_chat_administrators', 'chat', 'chat_administrators', 'chat_member']);

function commandScope(v: unknown): BotCommandScope {
  if (!isObject(v)) throw badRequest("can't parse BotCommandScope JSON object");
  if (typeof v.type !== 'string') throw badRequest('field "type" must be of type String');
  if (!SCOPE_TYPES.has(v.type)) throw badRequest('unsupported bot command scope type');
  const scope = { type: v.type } as Record<string, unknown>;
  if (v.type.startsWith('chat')) {
    if (typeof v.chat_id !== 'number' && typeof v.chat_id !== 'string') throw badRequest('chat_id is empty');
    scope.chat_id = typeof v.chat_id === 'string' && /^-?\d{1,16}$/.test(v.chat_id) ? Number(v.chat_id) : v.chat_id;
  }
  if (v.type === 'chat_member') {
    if (typeof v.user_id !== 'number' || !Number.isSafeInteger(v.user_id)) throw badRequest('invalid user_id specified');
    scope.user_id = v.user_id;
  }
  return scope as unknown as BotCommandScope;
}

type ProfileDeps = { profiles: BotProfileStore; conversations: Conversations; bots: Pick<BotStore, 'setName'> };

/**
 * The storage key of a scope: chat scopes name the person's chat by its id
 * (an @username is resolved), and only this bot's private chats exist, where
 * administrators' scopes do not apply.
 */
/** The default scope's storage key (BotFather's /setcommands sets that list). */
export const DEFAULT_SCOPE_KEY = JSON.stringify({ type: 'default' });

async function scopeKey(d: ProfileDeps, bot: BotRecord, scope: BotCommandScope | undefined): Promise<string> {
  if (!scope || !('chat_id' in scope)) return scope ? JSON.stringify({ type: scope.type }) : DEFAULT_SCOPE_KEY;
  if (scope.type !== 'chat') throw badRequest("can't use specified scope in private chats");
  const { person } = await d.conversations.privateChat(bot, scope.chat_id);
  return JSON.stringify({ type: 'chat', chat_id: person.id });
}

const target = { scope: json('BotCommandScope', commandScope), language_code: languageCode() };

export const profileMethods = (d: ProfileDeps) => [
  method('setMyCommands', {
    params: z.object({ commands: json('commands', botCommands), ...target }),
    async run({ bot }, p) {
      const key = await scopeKey(d, bot, p.scope);
      // No commands (absent or an empty list) deletes the list, as on Telegram.
      await d.profiles.setCommands(bot.id, key, p.language_code ?? '', p.commands?.length ? [...p.commands] : null);
      return true as const;
    },
  }),
  method('getMyCommands', {
    params: z.object(target),
    run: async ({ bot }, p) => (await d.profiles.getCommands(bot.id, await scopeKey(d, bot, p.scope), p.language_code ?? '')) ?? [],
  }),
  method('deleteMyCommands', {
    params: z.object(target),
    async run({ bot }, p) {
      await d.profiles.setCommands(bot.id, await scopeKey(d, bot, p.scope), p.language_code ?? '', null);
      return true as const;
    },
  }),
  method('setMyName', { params: z.object({ name: str('name'), language_code: languageCode() }), run: ({ bot }, p) => setField(d, bot, 'name', p.name, p.language_code ?? '') }),
  method('getMyName', { params: z.object({ language_code: languageCode() }), run: async ({ bot }, p) => ({ name: (await profileValue(d, bot, 'name', p.language_code ?? '')) || bot.name }) }),
  method('setMyDescription', {
    params: z.object({ description: str('description'), language_code: languageCode() }),
    run: ({ bot }, p) => setField(d, bot, 'description', p.description, p.language_code ?? ''),
  }),
  method('getMyDescription', { params: z.object({ language_code: languageCode() }), run: async ({ bot }, p) => ({ description: await profileValue(d, bot, 'description', p.language_code ?? '') }) }),
  method('setMyShortDescription', {
    params: z.object({ short_description: str('short_description'), language_code: languageCode() }),
    run: ({ bot }, p) => setField(d, bot, 'short_description', p.short_description, p.language_code ?? ''),
  }),
  method('getMyShortDescription', {
    params: z.object({ language_code: languageCode() }),
    run: async ({ bot }, p) => ({ short_description: await profileValue(d, bot, 'short_description', p.language_code ?? '') }),
  }),
];

const TOO_LONG: Record<ProfileField, string> = { name: 'bot name is too long', description: 'bot description is too long', short_description: 'bot short description is too long' };

/** An empty value removes the language's own one (then the default applies). BotFather's /setname etc. use it too. */
export async function setField(d: Pick<ProfileDeps, 'profiles' | 'bots'>, bot: BotRecord, name: ProfileField, value: string | undefined, lang: string): Promise<true> {
  const v = (value ?? '').trim();
  if (v.length > PROFILE_LIMITS[name]) throw badRequest(TOO_LONG[name]);
  await d.profiles.setProfile(bot.id, lang, name, v || null);
  // The default name is the bot's name: getMe's first_name and the `from` of its messages (Telegram answers the new one).
  // Removing it keeps the last one: a bot always has a name.
  if (name === 'name' && lang === '' && v) await d.bots.setName(bot.id, v);
  return true;
}

/** The language's own value, else the default one, else empty. */
async function profileValue(d: ProfileDeps, bot: BotRecord, name: ProfileField, lang: string): Promise<string> {
  const own = lang ? (await d.profiles.getProfile(bot.id, lang))[name] : undefined;
  return own ?? (await d.profiles.getProfile(bot.id, ''))[name] ?? '';
}
