import type { Message } from '@grammyjs/types';
import { BotApiError } from './errors.js';
import { botUser } from './objects.js';
import type { BotService } from './service.js';
import { Waiter, topics } from './wakeups.js';

/** An error of the chat client API, shaped like RFC 6750 §3 errors. */
export class ClientError extends Error {
  constructor(readonly status: number, readonly error: string, readonly description: string) {
    super(description);
    this.name = 'ClientError';
  }
}

export interface ChatSummary {
  bot: { id: number; username: string; first_name: string; is_bot: true };
  chat_id: number | null;
  last_message: Message.TextMessage | null;
}

const TOKEN_IN_TEXT = /(?<![0-9])[1-9][0-9]{0,15}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g;
const HAS_TOKEN = new RegExp(TOKEN_IN_TEXT.source);

/**
 * The people's side of the chat-bot interface (INTERFACE.md, chat client
 * API): acts for a signed-in user, addressing bots by username.
 */
export class ChatClient {
  constructor(private readonly service: BotService) {}

  private async bot(username: string) {
    const bot = await this.service.deps.storage.bots.findByUsername(username);
    if (!bot) throw new ClientError(404, 'not_found', `no bot named ${username}`);
    return bot;
  }

  /** BotFather first, then every chat the user has, newest activity first. */
  async chats(userId: string): Promise<ChatSummary[]> {
    const { storage } = this.service.deps;
    const person = await this.service.person(userId);
    const rows = await storage.chats.listForUser(userId);
    const out: ChatSummary[] = [];
    const father = this.service.botFather;
    const withFather = rows.some((r) => r.botId === father.id) ? rows : [{ botId: father.id, chatId: null }, ...rows];
    for (const r of withFather) {
      const bot = r.botId === father.id ? father : await storage.bots.get(r.botId);
      if (!bot) continue;
      const last = r.chatId === null ? undefined : await storage.chats.lastMessage(bot.id, r.chatId);
      out.push({
        bot: { ...botUser(bot), is_bot: true, username: bot.username },
        chat_id: r.chatId,
        last_message: last ? await this.service.messageFor(bot, person, this.redact(last, bot.id)) : null,
      });
    }
    return out.sort((a, b) => (a.bot.id === father.id ? -1 : b.bot.id === father.id ? 1 : (b.last_message?.date ?? 0) - (a.last_message?.date ?? 0)));
  }

  async send(userId: string, botUsername: string, text: unknown): Promise<Message.TextMessage> {
    if (typeof text !== 'string' || !text.trim()) throw new ClientError(400, 'invalid_request', 'text is required');
    await this.bot(botUsername);
    try {
      return await this.service.personWrites(userId, botUsername, text);
    } catch (e) {
      if (e instanceof BotApiError && e.code === 400) throw new ClientError(400, 'invalid_request', e.description.replace(/^Bad Request: /, ''));
      throw e;
    }
  }

  /** BotFather's token replies are shown once: stored copies are redacted after the first read (tokens are kept hashed). */
  private redact<T extends { text: string; fromBot: boolean }>(m: T, botId: number): T {
    if (botId !== this.service.botFather.id || !m.fromBot || !HAS_TOKEN.test(m.text)) return m;
    return { ...m, text: m.text.replace(TOKEN_IN_TEXT, '[token shown once; send /token for a new one]'), entities: null };
  }

  /** Messages after `after`, oldest first; with `timeoutSeconds`, waits for the first new one. */
  async messages(userId: string, botUsername: string, after: number, timeoutSeconds: number, signal?: AbortSignal): Promise<Message.TextMessage[]> {
    const { storage, wakeups } = this.service.deps;
    const bot = await this.bot(botUsername);
    const person = await this.service.person(userId);
    const waiter = new Waiter(wakeups, [topics.chat(bot.id, person.id)]);
    const stop = signal ? AbortSignal.any([signal, this.service.shutdownSignal]) : this.service.shutdownSignal;
    try {
      await waiter.ready();
      const deadline = Date.now() + timeoutSeconds * 1000;
      for (;;) {
        const found = await storage.chats.messagesAfter(bot.id, person.id, after, 100);
        if (found.length) {
          const out = await Promise.all(found.map((m) => this.service.messageFor(bot, person, m)));
          for (const m of found) {
            const hidden = this.redact(m, bot.id);
            if (hidden !== m) await storage.chats.editMessage(bot.id, person.id, m.messageId, { text: hidden.text, entities: null, editDate: m.editDate });
          }
          return out;
        }
        if (!(await waiter.wait(deadline - Date.now(), stop))) return [];
      }
    } finally {
      waiter.close();
    }
  }
}
