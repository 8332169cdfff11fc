import type { BotCommand } from '@grammyjs/types';
import { GatehouseError } from '../errors.js';
import type { ReplyMarkup } from './keyboards.js';
import { botCommands, DEFAULT_SCOPE_KEY, PROFILE_LIMITS, setField } from './methods/profile.js';
import type { BotProfileStore, BotRecord, BotStore, ProfileField } from './ports.js';

/**
 * BotFather's profile commands (/setname, /setdescription, /setabouttext,
 * /setcommands): the same store and the same validation as the Bot API's
 * setMyName, setMyDescription, setMyShortDescription and setMyCommands
 * (methods/profile.ts), so getMyName & co. answer what was set here.
 */
export type EditCommand = 'setname' | 'setdescription' | 'setabouttext' | 'setcommands';
export const EDIT_COMMANDS: readonly EditCommand[] = ['setname', 'setdescription', 'setabouttext', 'setcommands'];

export interface Reply {
  text: string;
  markup?: ReplyMarkup;
}

/** Telegram's BotFather hides its keyboard of bots once a bot is chosen. */
export const REMOVE_KEYBOARD: ReplyMarkup = { remove_keyboard: true };

/** A keyboard of the person's bots, one @username per row, as Telegram's BotFather offers. */
export const botKeyboard = (bots: BotRecord[]): ReplyMarkup => ({
  keyboard: bots.map((b) => [{ text: `@${b.username}` }]), one_time_keyboard: true, resize_keyboard: true,
});

const FIELD: Record<Exclude<EditCommand, 'setcommands'>, ProfileField> = { setname: 'name', setdescription: 'description', setabouttext: 'short_description' };

export const CHOOSE: Record<EditCommand, string> = {
  setname: 'Choose a bot to change its name.',
  setdescription: 'Choose a bot to change description.',
  setabouttext: 'Choose a bot to change the about section.',
  setcommands: 'Choose a bot to change the list of commands.',
};

const COMMANDS_FORMAT = 'command1 - Description\ncommand2 - Another description';

/** What BotFather asks once a bot is chosen. */
export function askValue(command: EditCommand, bot: BotRecord): Reply {
  const text = {
    setname: `OK. Send me the new name for your bot @${bot.username}. It can be at most ${PROFILE_LIMITS.name} characters long.`,
    setdescription: `OK. Send me the new description for the bot @${bot.username}. People will see this description when they open a chat with your bot, in a block titled 'What can this bot do?'. At most ${PROFILE_LIMITS.description} characters.\n\nSend /empty to remove the description.`,
    setabouttext: `OK. Send me the new 'About' text for @${bot.username}. People will see this text on the bot's profile page. At most ${PROFILE_LIMITS.short_description} characters.\n\nSend /empty to remove the about text.`,
    setcommands: `OK. Send me a list of commands for your bot @${bot.username}. Please use this format:\n\n${COMMANDS_FORMAT}\n\nSend /empty to keep the list empty.`,
  }[command];
  return { text, markup: REMOVE_KEYBOARD };
}

const DONE: Record<EditCommand, string> = {
  setname: 'Success! Name updated. /help',
  setdescription: 'Success! Description updated. /help',
  setabouttext: 'Success! About section updated. /help',
  setcommands: 'Success! Command list updated. /help',
};

/**
 * `command - description` lines, a leading slash allowed, blank lines skipped.
 * The line's problem, or the commands (validated by setMyCommands' own rules).
 */
export function parseCommandLines(text: string): BotCommand[] | string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  const list: { command: string; description: string }[] = [];
  for (const [i, line] of lines.entries()) {
    const m = /^\/?(\S+)\s+[-–—]\s+(.+)$/.exec(line);
    if (!m) return `Sorry, line ${i + 1} is not in the right format. Please use this format:\n\n${COMMANDS_FORMAT}\n\nSend the list again, or /cancel.`;
    list.push({ command: m[1]!, description: m[2]! });
  }
  try {
    return botCommands(list);
  } catch (e) {
    if (!(e instanceof GatehouseError)) throw e;
    return `Sorry, the list of commands is invalid: ${commandProblem(e.description ?? '')}. Send the list again, or /cancel.`;
  }
}

function commandProblem(detail: string): string {
  if (detail === 'BOT_COMMANDS_TOO_MUCH') return 'a bot can have at most 100 commands';
  if (detail === 'BOT_COMMAND_INVALID') return 'commands may use only lowercase English letters, digits and underscores';
  return detail;
}

/** Stores the value; the reply says whether it took (`again`: ask for the value once more). */
export async function applyValue(stores: { profiles: BotProfileStore; bots: Pick<BotStore, 'setName'> }, command: EditCommand, bot: BotRecord, text: string, empty: boolean): Promise<{ reply: Reply; again: boolean }> {
  if (command === 'setcommands') {
    const commands = empty ? [] : parseCommandLines(text);
    if (typeof commands === 'string') return { reply: { text: commands }, again: true };
    await stores.profiles.setCommands(bot.id, DEFAULT_SCOPE_KEY, '', commands.length ? commands : null);
    return { reply: { text: DONE[command] }, again: false };
  }
  const field = FIELD[command];
  if (empty && field === 'name') return { reply: { text: 'Sorry, a bot must have a name. Send the new name, or /cancel.' }, again: true };
  try {
    await setField(stores, bot, field, empty ? '' : text, '');
  } catch (e) {
    if (!(e instanceof GatehouseError)) throw e;
    const why = /too long/.test(e.description ?? '') ? `this is too long: at most ${PROFILE_LIMITS[field]} characters` : (e.description ?? 'that did not work');
    return { reply: { text: `Sorry, ${why}. Please try again, or /cancel.` }, again: true };
  }
  return { reply: { text: DONE[command] }, again: false };
}

/** /mybots, once a bot is chosen: what is set, and the commands that change it. */
export async function botSummary(profiles: BotProfileStore, bot: BotRecord): Promise<Reply> {
  const p = await profiles.getProfile(bot.id, '');
  const commands = (await profiles.getCommands(bot.id, DEFAULT_SCOPE_KEY, '')) ?? [];
  const lines = [
    `Here it is: ${p.name ?? bot.name} @${bot.username}.`,
    '',
    `About: ${p.short_description ?? '(none)'}`,
    `Description: ${p.description ?? '(none)'}`,
    `Commands: ${commands.length ? commands.map((c) => `/${c.command}`).join(' ') : '(none)'}`,
    '',
    'What do you want to do with the bot? /setname, /setdescription, /setabouttext, /setcommands, /token, /revoke or /deletebot.',
  ];
  return { text: lines.join('\n'), markup: REMOVE_KEYBOARD };
}
