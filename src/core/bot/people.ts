import type { Chat, Message } from '@grammyjs/types';
import type { CallbackQueries } from './callbacks.js';
import type { Conversations, Written } from './conversations.js';
import { invalidRequest, notFound } from '../errors.js';
import { callbackButton, MAX_CALLBACK_DATA } from './keyboards.js';
import { botUser, privateChat } from './objects.js';
import type { BotCommand } from '@grammyjs/types';
import type { BotProfileStore, BotRecord, BotStore, ChatStore, Person } from './ports.js';
import { Waiter, chatChange, topics, type Wakeups } from './wakeups.js';
import { mayUseNotifyChat, type NotifyBotIdentity } from './notify-bot.js';

/** Who is asking: the signed-in person, and the client their `chat` token was issued to. */
export interface ChatViewer {
  userId: string;
  clientId: string;
}

export interface ChatSummary {
  bot: { id: number; username: string; first_name: string; is_bot: true };
  chat_id: number | null;
  last_message: Message.TextMessage | null;
}

/** A message deleted while the person's poll waited (chat client API). */
export interface DeletedMessage {
  message_id: number;
  chat: Chat.PrivateChat;
  deleted: true;
}

/** What the person's client shows after a press: a toast, an alert, or a link to open. */
export interface PressAnswer {
  text?: string;
  show_alert?: boolean;
  url?: string;
}

const TOKEN_IN_TEXT = /(?<![0-9])[1-9][0-9]{0,15}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g;
const HAS_TOKEN = new RegExp(TOKEN_IN_TEXT.source);

/**
 * The people's side of the chat-bot interface (docs/chat-bot.md,
 * "People's side"): acts for a signed-in user, addressing bots by username.
 */
export interface ChatClientDeps {
  conversations: Conversations;
  callbacks: CallbackQueries;
  bots: BotStore;
  chats: ChatStore;
  /** The bots' command lists, offered when the person types `/`. */
  profiles: BotProfileStore;
  wakeups: Wakeups;
  /** BotFather's account, and what answers people who write to it. */
  botFather: { account: BotRecord; answer(w: Written): Promise<void> };
  /** Aborted at shutdown, so pending polls answer at once. */
  shutdown: AbortSignal;
  /** The notification bot, whose chat only the first-party chat page sees (src/core/bot/notify-bot.ts). */
  notifyBot?: NotifyBotIdentity;
}

export class ChatClient {
  constructor(private readonly deps: ChatClientDeps) {}

  /** The notification bot's id when `who` may not see its chat (another application's token). */
  private async hiddenBot(who: ChatViewer): Promise<number | undefined> {
    if (mayUseNotifyChat(who.clientId)) return undefined;
    return (await this.deps.notifyBot?.bot())?.id;
  }

  private async bot(username: string, who: ChatViewer) {
    // Usernames are letters, digits and underscores: anything else (a NUL, which PostgreSQL refuses in text) names no bot.
    if (!/^[A-Za-z0-9_]{1,64}$/.test(username)) throw notFound('no such bot');
    const bot = await this.deps.bots.findByUsername(username);
    // The notification bot is answered as an unknown bot would be: no oracle of its name.
    if (!bot || bot.id === await this.hiddenBot(who)) throw notFound(`no bot named ${username}`);
    return bot;
  }

  /** BotFather first, then every chat the user has, newest activity first. */
  async chats(who: ChatViewer): Promise<ChatSummary[]> {
    const { conversations, bots, chats } = this.deps;
    const { userId } = who;
    const person = await conversations.person(userId);
    const hidden = await this.hiddenBot(who);
    const rows = (await chats.listForUser(userId)).filter((r) => r.botId !== hidden);
    const out: ChatSummary[] = [];
    const father = this.deps.botFather.account;
    const withFather = rows.some((r) => r.botId === father.id) ? rows : [{ botId: father.id, chatId: null }, ...rows];
    for (const r of withFather) {
      const bot = r.botId === father.id ? father : await bots.get(r.botId);
      if (!bot) continue;
      const last = r.chatId === null ? undefined : await chats.lastMessage(bot.id, r.chatId);
      out.push({
        bot: { ...botUser(bot), is_bot: true, username: bot.username },
        chat_id: r.chatId,
        last_message: last ? await conversations.messageFor(bot, person, this.redact(last, bot.id), 'person') : null,
      });
    }
    return out.sort((a, b) => (a.bot.id === father.id ? -1 : b.bot.id === father.id ? 1 : (b.last_message?.date ?? 0) - (a.last_message?.date ?? 0)));
  }

  async send(who: ChatViewer, botUsername: string, text: unknown): Promise<Message.TextMessage> {
    if (typeof text !== 'string' || !text.trim()) throw invalidRequest('text is required');
    const bot = await this.bot(botUsername, who);
    // A refusal (text too long, …) is a GatehouseError the chat client API answers as it is.
    const written = await this.deps.conversations.personWrites(who.userId, bot, text);
    if (written.bot.id === this.deps.botFather.account.id) await this.deps.botFather.answer(written);
    return written.message;
  }

  /**
   * The person presses an inline button: only a callback button of a bot's
   * message in their own chat with the bot; anything else is refused and
   * the bot hears nothing. Resolves with the bot's answer, or {} when the
   * bot did not answer in time.
   */
  async press(who: ChatViewer, botUsername: string, messageId: unknown, data: unknown, signal?: AbortSignal): Promise<{ ok: true; result: PressAnswer } | Record<string, never>> {
    const id = typeof messageId === 'string' && /^\d{1,15}$/.test(messageId) ? Number(messageId) : messageId;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw invalidRequest('message_id must be a positive integer');
    if (typeof data !== 'string' || !data || Buffer.byteLength(data) > MAX_CALLBACK_DATA) throw invalidRequest('data must be 1-64 bytes');
    const { conversations, chats, callbacks, shutdown } = this.deps;
    const bot = await this.bot(botUsername, who);
    const person = await conversations.person(who.userId);
    // Two reads at once (on PostgreSQL two connections); the cached answer counts only once the button is found.
    const [m, cached] = await Promise.all([chats.getMessage(bot.id, person.id, id), callbacks.cached(bot, person, id, data)]);
    if (!m) throw notFound('no such message in this chat');
    if (!m.fromBot || !callbackButton(m.replyMarkup, data)) throw invalidRequest('the message has no button with this data');
    const answer = cached ?? await callbacks.press(bot, person, m, data, signal ? AbortSignal.any([signal, shutdown]) : shutdown);
    if (!answer) return {};
    const { text, show_alert, url } = answer;
    return { ok: true, result: { ...(text ? { text } : {}), ...(show_alert ? { show_alert } : {}), ...(url ? { url } : {}) } };
  }

  /**
   * The commands the bot offers this person, as Telegram picks them for a
   * private chat: the chat's own scope, else all_private_chats, else default
   * (Bot API, "Determining list of commands"; no language is known here).
   */
  async commands(who: ChatViewer, botUsername: string): Promise<BotCommand[]> {
    const bot = await this.bot(botUsername, who);
    const person = await this.deps.conversations.person(who.userId);
    const scopes = [{ type: 'chat', chat_id: person.id }, { type: 'all_private_chats' }, { type: 'default' }];
    for (const scope of scopes) {
      const list = await this.deps.profiles.getCommands(bot.id, JSON.stringify(scope), '');
      if (list) return list;
    }
    return [];
  }

  /** BotFather's token replies are shown once: stored copies are redacted after the first read (tokens are kept hashed). */
  private redact<T extends { text: string; fromBot: boolean }>(m: T, botId: number): T {
    if (botId !== this.deps.botFather.account.id || !m.fromBot || !HAS_TOKEN.test(m.text)) return m;
    return { ...m, text: m.text.replace(TOKEN_IN_TEXT, '[token shown once; send /token for a new one]'), entities: null };
  }

  /**
   * Messages after `after`, oldest first; with `timeoutSeconds`, waits for
   * the first new one. Edits and deletions of earlier messages made while
   * the poll waits are answered too: the edited message, or a DeletedMessage.
   */
  async messages(who: ChatViewer, botUsername: string, after: number, timeoutSeconds: number, signal?: AbortSignal): Promise<(Message | DeletedMessage)[]> {
    const { conversations, chats, wakeups, shutdown } = this.deps;
    const bot = await this.bot(botUsername, who);
    const person = await conversations.person(who.userId);
    const changed = new Map<number, 'edited' | 'deleted'>();
    const waiter = new Waiter(wakeups, [topics.chat(bot.id, person.id)], (_topic, message) => {
      const c = chatChange.parse(message);
      if (c && c.kind !== 'added' && c.messageId <= after) changed.set(c.messageId, c.kind);
      return true;
    });
    const stop = signal ? AbortSignal.any([signal, shutdown]) : shutdown;
    try {
      await waiter.ready();
      const deadline = Date.now() + timeoutSeconds * 1000;
      for (;;) {
        const found = await chats.messagesAfter(bot.id, person.id, after, 100);
        if (found.length || changed.size) {
          const out: (Message | DeletedMessage)[] = await this.changes(bot, person, changed);
          out.push(...await Promise.all(found.map((m) => conversations.messageFor(bot, person, m, 'person'))));
          for (const m of found) {
            const hidden = this.redact(m, bot.id);
            if (hidden !== m) await chats.editMessage(bot.id, person.id, m.messageId, { text: hidden.text, entities: null, editDate: m.editDate }, { erase: true });
          }
          return out;
        }
        if (!(await waiter.wait(deadline - Date.now(), stop))) return [];
      }
    } finally {
      waiter.close();
    }
  }

  /** Earlier messages edited or deleted during a poll, by message_id, as they are now. */
  private async changes(bot: BotRecord, person: Person, changed: Map<number, 'edited' | 'deleted'>): Promise<(Message | DeletedMessage)[]> {
    const out: (Message | DeletedMessage)[] = [];
    for (const id of [...changed.keys()].sort((a, b) => a - b)) {
      const m = await this.deps.chats.getMessage(bot.id, person.id, id);
      out.push(m ? await this.deps.conversations.messageFor(bot, person, this.redact(m, bot.id), 'person') : { message_id: id, chat: privateChat(person), deleted: true });
    }
    return out;
  }
}
