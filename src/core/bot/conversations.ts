import type { Message, Update } from '@grammyjs/types';
import type { Clock, UserStore } from '../ports.js';
import { detectEntities } from './detect.js';
import type { GroupCommit } from '../group-commit.js';
import { botWriteGroups, PersonWriteGroups, type BotWrite, type BotWritten, type PersonWritten } from './group-writes.js';
import { badRequest, forbidden } from './errors.js';
import type { FormattedText } from './format.js';
import type { ReplyMarkup } from './keyboards.js';
import { messageObject, type Viewer } from './objects.js';
import type { BotRecord, BotStorage, ChatRecord, MessageContent, Person, StoredMessage } from './ports.js';
import { newAccountId } from './token.js';
import { chatChange, topics, type Wakeups } from './wakeups.js';

export const MAX_TEXT = 4096;

/** People whose id is remembered (Conversations.personIds), forgotten all at once past this. */
const PERSON_IDS_MAX = 100_000;

export const secs = (ms: number) => Math.floor(ms / 1000);

export interface ConversationDeps {
  storage: BotStorage;
  users: UserStore;
  wakeups: Wakeups;
  clock: Clock;
}

/** What a bot's message carries besides its text. */
export interface BotWriteOptions {
  replyTo?: number | null;
  replyMarkup?: ReplyMarkup | null;
  content?: MessageContent;
}

/** What a person wrote, with the chat it went into. */
export interface Written {
  message: Message.TextMessage;
  bot: BotRecord;
  person: Person;
  stored: StoredMessage;
  chat: ChatRecord;
}

/**
 * Private chats between people and bots: who is in a chat, and writing into
 * it from either side (the message stored, then the chat's readers woken).
 * Shared by the Bot API methods, BotFather and the people's chat client.
 */
export class Conversations {
  private readonly groups: PersonWriteGroups;
  /**
   * A user's person id, once known: it never changes while the account
   * exists (PersonStore.ensure), so a person's message needs no read before
   * its write, which reads the person's current names itself and stores
   * nothing when the account is gone.
   */
  private readonly personIds = new Map<string, number>();
  private readonly botGroups: GroupCommit<BotWrite, BotWritten>;

  constructor(private readonly deps: ConversationDeps) {
    this.groups = new PersonWriteGroups(deps.storage);
    this.botGroups = botWriteGroups(deps.storage);
  }

  /** The person a bot addresses by chat_id, with their chat; "chat not found" unless they wrote first (Bot API: bots cannot start chats). */
  async privateChat(bot: BotRecord, chat: number | string): Promise<{ person: Person; chat: ChatRecord }> {
    const found = await this.deps.storage.chats.withPerson(bot.id, chat);
    if (!found) throw badRequest('chat not found');
    return found;
  }

  async messageFor(bot: BotRecord, person: Person, m: StoredMessage, viewer: Viewer = 'bot'): Promise<Message.TextMessage> {
    const replyTo = m.replyToMessageId !== null ? await this.deps.storage.chats.getMessage(bot.id, m.chatId, m.replyToMessageId) : undefined;
    return messageObject(m, bot, person, replyTo, viewer);
  }

  /** The bot writes into a private chat (BotFather's replies, the methods that read the chat first). */
  async botWrites(bot: BotRecord, person: Person, f: FormattedText, opts: BotWriteOptions = {}): Promise<StoredMessage> {
    const written = await this.botWritesTo(bot, person.id, f, opts);
    return written.message;
  }

  /**
   * The bot writes into its private chat with the person whose id is
   * `chatId`: "chat not found" unless they wrote first, found by the write
   * itself (sendMessage reads nothing before). Group-committed with the bot
   * messages arriving at the same moment (group-writes.ts).
   */
  async botWritesTo(bot: BotRecord, chatId: number, f: FormattedText, opts: BotWriteOptions = {}): Promise<{ person: Person; message: StoredMessage }> {
    const now = this.deps.clock.now();
    const written = await this.botGroups.submit({ now, message: {
      botId: bot.id, chatId, fromBot: true, date: secs(now), text: f.text, entities: f.entities.length ? f.entities : null,
      replyToMessageId: opts.replyTo ?? null, replyMarkup: opts.replyMarkup ?? null, content: opts.content && Object.keys(opts.content).length ? opts.content : null,
    } });
    if (!written) throw badRequest('chat not found');
    this.deps.wakeups.publish(topics.chat(bot.id, chatId), chatChange.added(written.message.messageId));
    return written;
  }

  /** The person's numeric id, created on first use. */
  async person(userId: string): Promise<Person> {
    const { storage, users } = this.deps;
    const existing = await storage.people.get(userId);
    if (existing) return existing;
    const user = await users.get(userId);
    if (!user) throw forbidden('user not found');
    for (let i = 0; i < 5; i++) {
      await storage.people.ensure(userId, newAccountId());
      const p = await storage.people.get(userId);
      if (p) return p;
    }
    throw new Error('could not allocate a chat id');
  }

  /**
   * A person writes to a bot: the message, the chat (on first contact) and
   * the bot's update are stored in one transaction (shared with the messages
   * other people send at the same moment: group-writes.ts), then waiting long
   * polls and the webhook deliverer are woken. Accounts answered in-process
   * (BotFather, no token) get no update: their caller answers them. `bot`
   * is the one the caller found by username (read once per message).
   */
  async personWrites(userId: string, bot: BotRecord, rawText: string): Promise<Written> {
    const { clock, wakeups } = this.deps;
    const text = rawText.trim();
    if (!text) throw badRequest('message text is empty');
    if (text.length > MAX_TEXT) throw badRequest('message is too long');
    const personId = this.personIds.get(userId) ?? (await this.person(userId)).id;
    const now = clock.now();
    const entities = detectEntities(text);
    const gets = bot.tokenHash !== null && wantsUpdate(bot, 'message');
    let written: PersonWritten;
    try {
      written = await this.groups.submit({
        bot, personId, userId, text, entities: entities.length ? entities : null, date: secs(now), now,
        ...(gets ? { update: (m: StoredMessage, p: Person) => (update_id: number) => ({ update_id, message: messageObject(m, bot, p) } as Update) } : {}),
      });
    } catch (e) {
      // The account may be gone: the next message looks the person up again.
      this.personIds.delete(userId);
      throw e;
    }
    const { stored, chat, person, update } = written;
    if (!this.personIds.has(userId)) {
      if (this.personIds.size >= PERSON_IDS_MAX) this.personIds.clear();
      this.personIds.set(userId, person.id);
    }
    wakeups.publish(topics.chat(bot.id, person.id), chatChange.added(stored.messageId));
    // The update itself rides along for a long poll in this process (getUpdates answers it without reading it back).
    if (update) wakeups.publish(topics.updates(bot.id), String(update.update_id), update);
    return { message: messageObject(stored, bot, person), bot, person, stored, chat };
  }
}

/** Not in the default set of an empty allowed_updates (Bot API, getUpdates). */
const OPT_IN = new Set(['chat_member', 'message_reaction', 'message_reaction_count']);

/** Whether the bot receives updates of `type` under its allowed_updates (empty or absent: every type but the opt-in ones). */
export function wantsUpdate(bot: BotRecord, type: Exclude<keyof Update, 'update_id'>): boolean {
  const allowed = bot.webhook ? bot.webhook.allowedUpdates : bot.allowedUpdates;
  return !allowed || allowed.length === 0 ? !OPT_IN.has(type) : allowed.includes(type);
}
