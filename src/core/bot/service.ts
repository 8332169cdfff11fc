import type { Message, Update } from '@grammyjs/types';
import type { Clock, UserStore } from '../ports.js';
import { detectEntities } from './detect.js';
import { BotApiError, badRequest, notFound, unauthorized } from './errors.js';
import { FloodControl, type FloodPolicy } from './flood.js';
import type { FormattedText } from './format.js';
import { BOTFATHER, ensureBotFather } from './manage.js';
import { methods } from './methods.js';
import { messageObject } from './objects.js';
import type { BotParams, ChatRef } from './params.js';
import type { BotRecord, BotStorage, ChatRecord, Person, StoredMessage } from './ports.js';
import { hashBotToken, newAccountId, tokenBotId } from './token.js';
import { topics, type Wakeups } from './wakeups.js';

export interface BotConfig {
  /** GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: webhooks may point at loopback and private networks. */
  allowPrivateWebhooks: boolean;
  flood: FloodPolicy;
  /** Unconfirmed updates are kept this long (Bot API: 24 hours). */
  updateTtlMs: number;
}

export const MAX_TEXT = 4096;

export interface BotServiceDeps {
  storage: BotStorage;
  users: UserStore;
  wakeups: Wakeups;
  clock: Clock;
  config: BotConfig;
  /**
   * Resolves a webhook URL's host and says why it may not be used (private
   * address, unresolvable), or undefined when it may. Injected: DNS is I/O.
   */
  checkWebhookUrl: (url: URL) => Promise<string | undefined>;
}

export const secs = (ms: number) => Math.floor(ms / 1000);

/**
 * The Bot API's protocol core: authenticates bots by token, dispatches
 * methods, and moves messages between people and bots. Plain values in,
 * plain values out; the HTTP edge only maps them.
 */
export class BotService {
  readonly flood: FloodControl;
  private botFatherRecord: BotRecord | undefined;
  /** Aborted at shutdown so pending long polls return at once. */
  private readonly stopping = new AbortController();
  /** Lets BotFather (which lives in another module) answer people. */
  onSystemMessage: ((bot: BotRecord, person: Person, message: StoredMessage, chat: ChatRecord) => Promise<void>) | undefined;

  constructor(readonly deps: BotServiceDeps) {
    this.flood = new FloodControl(deps.config.flood);
  }

  async init(): Promise<void> {
    this.botFatherRecord = await ensureBotFather(this.deps.storage, this.deps.users, this.deps.clock);
  }

  get botFather(): BotRecord {
    if (!this.botFatherRecord) throw new Error('BotService.init() was not called');
    return this.botFatherRecord;
  }

  get shutdownSignal(): AbortSignal {
    return this.stopping.signal;
  }

  close(): void {
    this.stopping.abort();
  }

  /** 401 Unauthorized for anything but a current token of an existing bot. */
  async authenticate(token: string): Promise<BotRecord> {
    const botId = tokenBotId(token);
    if (botId === undefined) throw unauthorized();
    const bot = await this.deps.storage.bots.findByTokenHash(hashBotToken(token));
    if (!bot || bot.id !== botId) throw unauthorized();
    return bot;
  }

  /** One Bot API call: `/bot<token>/<method>`; method names are case-insensitive. */
  async call(token: string, method: string, params: BotParams, signal?: AbortSignal): Promise<unknown> {
    return this.callAs(await this.authenticate(token), method, params, signal);
  }

  /** A method call by an authenticated bot (also: a method named in a webhook's reply). */
  async callAs(bot: BotRecord, method: string, params: BotParams, signal?: AbortSignal): Promise<unknown> {
    const handler = methods[method.toLowerCase()];
    if (!handler) throw notFound('method not found');
    const signals = signal ? AbortSignal.any([signal, this.stopping.signal]) : this.stopping.signal;
    return handler({ service: this, bot, signal: signals }, params);
  }

  /** The person a bot addresses by chat_id, with their chat; "chat not found" unless they wrote first (spec §4 rule 8.3). */
  async privateChat(bot: BotRecord, ref: ChatRef): Promise<{ person: Person; chat: ChatRecord }> {
    const { storage } = this.deps;
    const person = 'id' in ref ? await storage.people.getById(ref.id) : await storage.people.findByUsername(ref.username);
    const chat = person && (await storage.chats.get(bot.id, person.id));
    if (!person || !chat) throw badRequest('chat not found');
    return { person, chat };
  }

  async messageFor(bot: BotRecord, person: Person, m: StoredMessage): Promise<Message.TextMessage> {
    const replyTo = m.replyToMessageId !== null ? await this.deps.storage.chats.getMessage(bot.id, m.chatId, m.replyToMessageId) : undefined;
    return messageObject(m, bot, person, replyTo);
  }

  /** The bot writes into a private chat (sendMessage, BotFather's replies). */
  async botWrites(bot: BotRecord, person: Person, f: FormattedText, replyTo: number | null = null): Promise<StoredMessage> {
    const now = this.deps.clock.now();
    const m = await this.deps.storage.chats.addMessage({
      botId: bot.id, chatId: person.id, fromBot: true, date: secs(now), text: f.text, entities: f.entities.length ? f.entities : null, replyToMessageId: replyTo,
    }, now);
    this.deps.wakeups.publish(topics.chat(bot.id, person.id), String(m.messageId));
    return m;
  }

  /** The person's numeric id, created on first use. */
  async person(userId: string): Promise<Person> {
    const { storage, users } = this.deps;
    const existing = await storage.people.get(userId);
    if (existing) return existing;
    const user = await users.get(userId);
    if (!user) throw new BotApiError(403, 'Forbidden: user not found');
    for (let i = 0; i < 5; i++) {
      await storage.people.ensure(userId, newAccountId());
      const p = await storage.people.get(userId);
      if (p) return p;
    }
    throw new Error('could not allocate a chat id');
  }

  /** Whether the bot receives `message` updates under its allowed_updates (empty list = default set). */
  private wantsMessages(bot: BotRecord): boolean {
    const allowed = bot.webhook ? bot.webhook.allowedUpdates : bot.allowedUpdates;
    return !allowed || allowed.length === 0 || allowed.includes('message');
  }

  /**
   * A person writes to a bot: the message, the chat (on first contact) and
   * the bot's update are stored in one transaction, then waiting long polls
   * and the webhook deliverer are woken.
   */
  async personWrites(userId: string, botUsername: string, rawText: string): Promise<Message.TextMessage> {
    const { storage, clock, wakeups } = this.deps;
    const text = rawText.trim();
    if (!text) throw badRequest('message text is empty');
    if (text.length > MAX_TEXT) throw badRequest('message is too long');
    const bot = await storage.bots.findByUsername(botUsername);
    if (!bot) throw badRequest('chat not found');
    const person = await this.person(userId);
    const now = clock.now();
    const system = bot.tokenHash === null;
    const entities = detectEntities(text);
    const { message, chat, update } = await storage.transaction(async (tx) => {
      const chat = await tx.chats.open(bot.id, person.id, userId, now);
      const message = await tx.chats.addMessage({
        botId: bot.id, chatId: person.id, fromBot: false, date: secs(now), text, entities: entities.length ? entities : null, replyToMessageId: null,
      }, now);
      let update: Update | undefined;
      if (!system && this.wantsMessages(bot)) {
        const payload = messageObject(message, bot, person);
        update = await tx.updates.add(bot.id, person.id, (update_id) => ({ update_id, message: payload } as Update), now);
      }
      return { message, chat, update };
    });
    wakeups.publish(topics.chat(bot.id, person.id), String(message.messageId));
    if (update) wakeups.publish(topics.updates(bot.id), String(update.update_id));
    if (system && bot.username === BOTFATHER && this.onSystemMessage) await this.onSystemMessage(bot, person, message, chat);
    return messageObject(message, bot, person);
  }
}
