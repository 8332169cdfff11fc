import type { Transport } from './transport.js';
import type { ChatChannelConfig } from './chat.js';

/**
 * Buttons on the notification bot's messages. A button's callback_data is
 * `<prefix>:<payload>`: the prefix names the feature that sent it (sign-in
 * approval, one-tap security actions…), the payload is opaque to everyone
 * else (an id to look up, never a secret or an answer in clear). Features
 * register a handler per prefix; the notification bot's poller
 * (src/core/notify/link.ts) hands every press to `dispatch`, answers the
 * callback query with the handler's words and edits the message when asked,
 * so a stale button cannot act twice.
 */
export interface ChatPress {
  /** The chat the press came from: the handler must check it is the linked person's own. */
  chatId: string;
  /** The message the button was on (undefined when the Bot API did not say). */
  messageId: number | undefined;
  /** callback_data after `<prefix>:`. */
  payload: string;
  now: number;
}

export interface ChatActionOutcome {
  /** answerCallbackQuery's text: what the person sees right after the press. */
  answer: string;
  showAlert?: boolean;
  /** Replaces the message's text and removes its buttons (the outcome: approved, denied, expired…). */
  editText?: string;
}

export type ChatActionHandler = (press: ChatPress) => Promise<ChatActionOutcome>;

/** Bot API: callback_data is 1–64 bytes. */
export const CALLBACK_DATA_BYTES = 64;
const PREFIX = /^[a-z][a-z0-9_-]{0,15}$/;

export const STALE_BUTTON: ChatActionOutcome = { answer: 'This button no longer works.' };

/** A command's answer: text, with buttons when it lists things to act on. */
export interface ChatCommandReply {
  text: string;
  buttons?: ChatButton[][];
}

/** A notification-bot command (`/sessions`): the chat it came from; the reply. */
export type ChatCommandHandler = (chatId: string, now: number) => Promise<ChatCommandReply>;

export class ChatActions {
  private readonly handlers = new Map<string, ChatActionHandler>();
  private readonly commands = new Map<string, ChatCommandHandler>();

  /** A command of the notification bot beside /start and /stop (lower-case letters and `_`). */
  registerChatCommand(name: string, handler: ChatCommandHandler): void {
    if (!/^[a-z][a-z_]{0,31}$/.test(name) || this.commands.has(name)) throw new Error(`bad or duplicate chat command: ${name}`);
    this.commands.set(name, handler);
  }

  /** The reply of the command `text` names (`/name` or `/name@bot`); undefined when none is registered. */
  async command(text: string, chatId: string, now: number): Promise<ChatCommandReply | undefined> {
    const m = /^\/([a-z_]+)(?:@\S+)?(?:\s|$)/.exec(text);
    const handler = m ? this.commands.get(m[1]!) : undefined;
    return handler?.(chatId, now);
  }

  /** One handler per prefix (lower-case letters, digits, `-`, `_`; at most 16). */
  registerChatAction(prefix: string, handler: ChatActionHandler): void {
    if (!PREFIX.test(prefix)) throw new Error(`bad chat action prefix: ${prefix}`);
    if (this.handlers.has(prefix)) throw new Error(`chat action prefix already registered: ${prefix}`);
    this.handlers.set(prefix, handler);
  }

  /** The handler's outcome; a press no handler knows (an old message, another bot's data) gets STALE_BUTTON. */
  async dispatch(data: string, press: Omit<ChatPress, 'payload'>): Promise<ChatActionOutcome> {
    const i = data.indexOf(':');
    const handler = i > 0 ? this.handlers.get(data.slice(0, i)) : undefined;
    if (!handler) return STALE_BUTTON;
    return handler({ ...press, payload: data.slice(i + 1) });
  }
}

/** callback_data for a button of `prefix`; throws when it would not fit the Bot API's 64 bytes. */
export function chatCallbackData(prefix: string, payload: string): string {
  const data = `${prefix}:${payload}`;
  if (!PREFIX.test(prefix) || Buffer.byteLength(data) > CALLBACK_DATA_BYTES) throw new Error('callback_data does not fit');
  return data;
}

export interface ChatButton {
  text: string;
  data: string;
}

/**
 * Sends and edits the notification bot's messages at once (not through the
 * outbox: a button must reach the person while the request it asks about is
 * still open). Any Telegram-compatible Bot API (GATEHOUSE_NOTIFY_BOT_API_URL).
 */
export class NotifyBotApi {
  constructor(private readonly transport: Transport, private readonly chat: ChatChannelConfig) {}

  async call(method: string, params: Record<string, unknown>, timeoutMs = 10_000): Promise<unknown> {
    const a = await this.transport.post({
      url: `${this.chat.apiUrl.replace(/\/+$/, '')}/bot${this.chat.token}/${method}`,
      headers: { 'content-type': 'application/json' }, body: JSON.stringify(params), timeoutMs, responseBytes: 64 * 1024,
    });
    let body: { ok?: boolean; result?: unknown; description?: string } = {};
    try {
      body = JSON.parse(a.excerpt) as typeof body;
    } catch {
      // Not a Bot API answer: reported below.
    }
    if (!body.ok) throw new Error(`notification bot: ${method} failed: ${a.error ?? body.description ?? a.status}`);
    return body.result;
  }

  private me: Promise<string | undefined> | undefined;

  /** The bot's username (getMe), asked once it answers (a failure is asked again next time). */
  username(): Promise<string | undefined> {
    this.me ??= this.call('getMe', {}).then((r) => {
      const u = (r as { username?: unknown } | undefined)?.username;
      return typeof u === 'string' ? u : undefined;
    }).catch(() => {
      this.me = undefined;
      return undefined;
    });
    return this.me;
  }

  /** A message with one row of buttons per inner array; the message_id. */
  async send(chatId: string, text: string, rows: ChatButton[][]): Promise<number> {
    const result = await this.call('sendMessage', {
      chat_id: /^-?\d+$/.test(chatId) ? Number(chatId) : chatId, text,
      reply_markup: { inline_keyboard: rows.map((r) => r.map((b) => ({ text: b.text, callback_data: b.data }))) },
    }) as { message_id?: number };
    if (typeof result?.message_id !== 'number') throw new Error('notification bot: sendMessage answered no message_id');
    return result.message_id;
  }

  /** Replaces the text and removes the buttons. */
  async edit(chatId: string, messageId: number, text: string): Promise<void> {
    await this.call('editMessageText', {
      chat_id: /^-?\d+$/.test(chatId) ? Number(chatId) : chatId, message_id: messageId, text, reply_markup: { inline_keyboard: [] },
    });
  }
}
