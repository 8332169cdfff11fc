import type { MessageEntity } from '@grammyjs/types';
import { BotInputError, createBot, nameProblem, rotateBotToken, usernameProblem } from './manage.js';
import type { Clock } from '../ports.js';
import { applyValue, askValue, botKeyboard, botSummary, CHOOSE, EDIT_COMMANDS, REMOVE_KEYBOARD, type EditCommand, type Reply as ProfileReply } from './botfather-profile.js';
import type { Conversations, Written } from './conversations.js';
import { BotUsernameTakenError, type BotRecord, type BotStorage, type Person } from './ports.js';

/**
 * BotFather's conversation (docs/chat-bot.md): a small state machine kept in
 * the chat row, so any process can carry on a conversation another started.
 */
type State =
  | { step: 'newbot_name' }
  | { step: 'newbot_username'; name: string }
  | { step: 'choose'; command: ChooseCommand }
  | { step: 'edit'; command: EditCommand; botId: number }
  | { step: 'deletebot_confirm'; botId: number; username: string };

type ChooseCommand = 'token' | 'revoke' | 'deletebot' | 'mybots' | EditCommand;

interface Reply extends ProfileReply {
  entities?: MessageEntity[];
}

export const CONFIRM_DELETE = 'Yes, I am totally sure.';

const HELP = `I can help you create and manage bots.

You can control me by sending these commands:

/newbot - create a new bot
/mybots - edit your bots
/token - generate a new token for a bot
/revoke - revoke a bot's access token
/deletebot - delete a bot

Edit Bots
/setname - change a bot's name
/setdescription - change bot description
/setabouttext - change bot about info
/setcommands - change the list of commands

/cancel - cancel the current operation
/help - show this list`;

const COMMAND_NAMES: Record<'newbot_name' | 'newbot_username' | 'deletebot_confirm', string> = { newbot_name: 'newbot', newbot_username: 'newbot', deletebot_confirm: 'deletebot' };
const NO_BOTS = 'You have currently no bots. Use the /newbot command to create a new bot first.';

function tokenReply(intro: string, token: string, outro: string): Reply {
  const head = `${intro}\n\nUse this token to access the HTTP API:\n`;
  return { text: `${head}${token}\n${outro}`, entities: [{ type: 'code', offset: head.length, length: token.length }] };
}

export interface BotFatherDeps {
  /** BotFather's own account (ensureBotFather, manage.ts). */
  account: BotRecord;
  storage: BotStorage;
  clock: Clock;
  conversations: Pick<Conversations, 'botWrites'>;
}

export class BotFather {
  constructor(private readonly deps: BotFatherDeps) {}

  get account(): BotRecord {
    return this.deps.account;
  }

  /** Answers what a person wrote to BotFather (the chat client calls it after storing the message). */
  async answer({ bot, person, stored: message, chat }: Written): Promise<void> {
    const state = chat.state ? (JSON.parse(chat.state) as State) : undefined;
    const { replies, next } = await this.step(person, message.text.trim(), state);
    const { storage } = this.deps;
    if (JSON.stringify(next ?? null) !== JSON.stringify(state ?? null)) await storage.chats.setState(bot.id, chat.chatId, next ? JSON.stringify(next) : null);
    for (const r of replies) await this.deps.conversations.botWrites(bot, person, { text: r.text, entities: r.entities ?? [] }, r.markup ? { replyMarkup: r.markup } : {});
  }

  private async ownBots(person: Person): Promise<BotRecord[]> {
    return this.deps.storage.bots.listByOwner(person.userId);
  }

  private async step(person: Person, text: string, state: State | undefined): Promise<{ replies: Reply[]; next?: State }> {
    const command = /^\/([A-Za-z_]+)(?:@\S+)?(?:\s|$)/.exec(text)?.[1]?.toLowerCase();
    // A command list may start with a slash ("/start - Start the bot"): that is the value, not a command.
    const commandList = state?.step === 'edit' && state.command === 'setcommands' && /^\/?\S+\s+[-–—]\s/.test(text);
    if (state?.step === 'edit' && command === 'empty') return this.edited(person, state, '', true);
    if (command && !commandList) return this.command(person, command, state);
    if (!state) return { replies: [{ text: `Send /newbot to create a bot, or /help to see what I can do.` }] };
    switch (state.step) {
      case 'newbot_name': {
        const problem = nameProblem(text);
        if (problem) return { replies: [{ text: problem }], next: state };
        return {
          replies: [{ text: "Good. Now let's choose a username for your bot. It must end in `bot`. Like this, for example: TetrisBot or tetris_bot." }],
          next: { step: 'newbot_username', name: text },
        };
      }
      case 'newbot_username':
        return this.newBot(person, state.name, text.replace(/^@/, ''));
      case 'choose':
        return this.chosen(person, state.command, text);
      case 'edit':
        return this.edited(person, state, text, false);
      case 'deletebot_confirm': {
        if (text !== CONFIRM_DELETE) {
          return { replies: [{ text: `Please enter the confirmation text exactly like this:\n${CONFIRM_DELETE}\n\nType /cancel to cancel the operation.` }], next: state };
        }
        const bot = (await this.ownBots(person)).find((b) => b.id === state.botId);
        if (bot) await this.deps.storage.bots.delete(bot.id);
        return { replies: [{ text: `Done! The bot @${state.username} is gone. /help` }] };
      }
    }
  }

  private async command(person: Person, command: string, state: State | undefined): Promise<{ replies: Reply[]; next?: State }> {
    switch (command) {
      case 'start':
      case 'help':
        return { replies: [{ text: HELP }] };
      case 'newbot':
        return { replies: [{ text: 'Alright, a new bot. How are we going to call it? Please choose a name for your bot.' }], next: { step: 'newbot_name' } };
      case 'mybots':
      case 'token':
      case 'revoke':
      case 'deletebot':
      case 'setname':
      case 'setdescription':
      case 'setabouttext':
      case 'setcommands': {
        const bots = await this.ownBots(person);
        if (!bots.length) return { replies: [{ text: NO_BOTS }] };
        // The person picks a bot from a reply keyboard of @usernames, as on Telegram; typing one works too.
        const list = `\n${bots.map((b) => `@${b.username}`).join('\n')}`;
        return { replies: [{ text: `${chooseText(command)}${list}`, markup: botKeyboard(bots) }], next: { step: 'choose', command } };
      }
      case 'cancel': {
        if (!state) return { replies: [{ text: "No active command to cancel. I wasn't doing anything anyway. Zzzzz..." }] };
        const name = state.step === 'choose' || state.step === 'edit' ? state.command : COMMAND_NAMES[state.step];
        return { replies: [{ text: `The command /${name} has been cancelled. Anything else I can do for you?\n\nSend /help for a list of commands.`, markup: REMOVE_KEYBOARD }] };
      }
      default:
        return { replies: [{ text: 'Unrecognized command. Say what? Send /help for a list of commands.' }], ...(state ? { next: state } : {}) };
    }
  }

  private async newBot(person: Person, name: string, username: string): Promise<{ replies: Reply[]; next?: State }> {
    const again = { step: 'newbot_username', name } as const;
    const problem = usernameProblem(username);
    if (problem) return { replies: [{ text: problem }], next: again };
    try {
      const { storage, clock } = this.deps;
      const { bot, token } = await createBot(storage, clock, { ownerUserId: person.userId, username, name });
      return {
        replies: [tokenReply(`Done! Congratulations on your new bot. You will find it at @${bot.username} in your chats.`, token,
          'Keep your token secure and store it safely, it can be used by anyone to control your bot. It is shown only once: Gatehouse keeps just its hash.\n\nFor a description of the Bot API, see this page: https://core.telegram.org/bots/api')],
      };
    } catch (e) {
      if (e instanceof BotUsernameTakenError) return { replies: [{ text: 'Sorry, this username is already taken. Please try something different.' }], next: again };
      if (e instanceof BotInputError) return { replies: [{ text: e.message }], next: again };
      throw e;
    }
  }

  /** The value for /setname & co., stored through the Bot API's own functions (botfather-profile.ts). */
  private async edited(person: Person, state: Extract<State, { step: 'edit' }>, text: string, empty: boolean): Promise<{ replies: Reply[]; next?: State }> {
    const bot = (await this.ownBots(person)).find((b) => b.id === state.botId);
    if (!bot) return { replies: [{ text: 'This bot is gone. Send /mybots to see your bots.' }] };
    const { reply, again } = await applyValue(this.deps.storage, state.command, bot, text, empty);
    return { replies: [reply], ...(again ? { next: state } : {}) };
  }

  private async chosen(person: Person, command: ChooseCommand, text: string): Promise<{ replies: Reply[]; next?: State }> {
    const wanted = text.replace(/^@/, '').toLowerCase();
    const bots = await this.ownBots(person);
    const bot = bots.find((b) => b.username.toLowerCase() === wanted);
    if (!bot) return { replies: [{ text: 'Invalid bot selected. Send the username of one of your bots, or /cancel.', markup: botKeyboard(bots) }], next: { step: 'choose', command } };
    if (command === 'mybots') return { replies: [await botSummary(this.deps.storage.profiles, bot)] };
    if ((EDIT_COMMANDS as readonly string[]).includes(command)) {
      const edit = command as EditCommand;
      return { replies: [askValue(edit, bot)], next: { step: 'edit', command: edit, botId: bot.id } };
    }
    if (command === 'deletebot') {
      return {
        replies: [{ text: `OK, you selected @${bot.username}. Are you sure you want to delete this bot?\n\nSend '${CONFIRM_DELETE}' to confirm you really want to delete this bot.`, markup: REMOVE_KEYBOARD }],
        next: { step: 'deletebot_confirm', botId: bot.id, username: bot.username },
      };
    }
    // Only the token's hash is kept, so /token cannot show the old one: it issues a new one, as /revoke does.
    const token = await rotateBotToken(this.deps.storage, bot);
    const intro = command === 'revoke'
      ? `Your token was replaced with a new one for @${bot.username}. The old token no longer works.`
      : `A new token for @${bot.username} (Gatehouse keeps only a hash of tokens, so the old one cannot be shown; it no longer works).`;
    return { replies: [{ ...tokenReply(intro, token, 'Keep your token secure and store it safely, it can be used by anyone to control your bot.'), markup: REMOVE_KEYBOARD }] };
  }
}

function chooseText(command: ChooseCommand): string {
  switch (command) {
    case 'mybots': return 'Choose a bot from the list below:';
    case 'deletebot': return 'Choose a bot to delete.';
    case 'revoke': return 'Choose a bot to revoke its token.';
    case 'token': return 'Choose a bot to generate a new token.';
    default: return CHOOSE[command];
  }
}
