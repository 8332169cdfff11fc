import { randomUUID } from 'node:crypto';
import type { Clock, RateLimitStore } from '../ports.js';
import { sendMessageRequest, type ChatChannelConfig } from './chat.js';
import { createEndpoint, personalChatInput } from './endpoints.js';
import type { Endpoint, EventStore } from './ports.js';
import type { Transport } from './transport.js';
import type { ChatActions } from './actions.js';

/** The JWS type of a chat-link token, so no other token of ours is accepted as one. */
export const LINK_TYP = 'gatehouse-notify-link+jwt';
export const LINK_TTL_MS = 10 * 60_000;
export const LINK_PATH = '/notifications/link';

export interface LinkKeys {
  sign(payload: Record<string, unknown>, typ: string): string;
  verify(token: string, opts: { typ: string; issuer: string }): Promise<Record<string, unknown> | undefined>;
}

/** Who the chat that asked is, as the Bot API told the notification bot (shown on the confirmation page). */
export interface LinkAbout {
  /** The chat's name (first and last name, or title) and username. */
  chatName?: string;
  chatUsername?: string;
  /** The notification bot's username (getMe). */
  bot?: string;
}

/** A link token's claims: which chat asked, and what the Bot API said about it. */
export interface LinkClaims extends LinkAbout {
  chatId: string;
  jti: string;
}

const claim = (v: unknown): string | undefined => (typeof v === 'string' && v ? v.slice(0, 128) : undefined);

/** A signed, short-lived link token naming the chat that asked (`/start`). */
export function linkToken(keys: LinkKeys, issuer: string, chatId: string, now: number, about: LinkAbout = {}): string {
  return keys.sign({
    iss: issuer, chat_id: chatId, jti: randomUUID(), iat: Math.floor(now / 1000), exp: Math.floor((now + LINK_TTL_MS) / 1000),
    ...(about.chatName ? { chat_name: about.chatName } : {}), ...(about.chatUsername ? { chat_username: about.chatUsername } : {}), ...(about.bot ? { bot: about.bot } : {}),
  }, LINK_TYP);
}

export async function readLinkToken(keys: LinkKeys, issuer: string, token: string, now: number): Promise<LinkClaims | undefined> {
  const c = await keys.verify(token, { typ: LINK_TYP, issuer });
  if (!c || typeof c.chat_id !== 'string' || typeof c.jti !== 'string' || typeof c.exp !== 'number' || c.exp * 1000 <= now) return undefined;
  const [chatName, chatUsername, bot] = [claim(c.chat_name), claim(c.chat_username), claim(c.bot)];
  return { chatId: c.chat_id, jti: c.jti, ...(chatName ? { chatName } : {}), ...(chatUsername ? { chatUsername } : {}), ...(bot ? { bot } : {}) };
}

/** Sends the person's security events to the chat (docs/events.md, Chat notifications); the endpoint there already, if any. */
export async function attachChat(deps: { events: EventStore; clock: Clock }, userId: string, chatId: string): Promise<Endpoint> {
  const existing = (await deps.events.endpoints.list({ userId })).find((e) => e.chatId === chatId && e.disabledAt === null);
  return existing ?? createEndpoint(deps.events, deps.clock, personalChatInput(chatId), { userId });
}

/**
 * Links the chat to the signed-in person: their security events go there
 * (docs/events.md, Chat notifications). Each link works once (its jti is burnt in the rate-limit store).
 * `mayConfirm` says whether this person may link that chat (src/core/notify/link-target.ts):
 * on Gatehouse's own chat service, only the chat's own person.
 */
export async function linkChat(
  deps: { events: EventStore; keys: LinkKeys; limits: RateLimitStore; clock: Clock; issuer: string; mayConfirm: (link: LinkClaims, userId: string) => Promise<boolean> },
  token: string, userId: string,
): Promise<{ ok: true; endpoint: Endpoint } | { ok: false; reason: 'invalid' | 'used' | 'not_yours' }> {
  const now = deps.clock.now();
  const link = await readLinkToken(deps.keys, deps.issuer, token, now);
  if (!link) return { ok: false, reason: 'invalid' };
  if (!(await deps.mayConfirm(link, userId))) return { ok: false, reason: 'not_yours' };
  if ((await deps.limits.hit(`notify-link:${link.jti}`, LINK_TTL_MS, now)) > 1) return { ok: false, reason: 'used' };
  return { ok: true, endpoint: await attachChat(deps, userId, link.chatId) };
}

/** What the notification bot needs of the one-time codes made at /account/security (src/core/notify/link-code.ts). */
export interface LinkCodeRedeemer {
  redeem(code: string, chatId: string): Promise<{ ok: true; username: string } | { ok: false }>;
}

interface BotChat {
  id?: number | string;
  username?: string;
  first_name?: string;
  last_name?: string;
  title?: string;
}

interface BotUpdate {
  update_id: number;
  message?: { text?: string; chat?: BotChat };
  callback_query?: { id?: string; data?: string; message?: { message_id?: number; chat?: { id?: number | string } } };
}

export interface LinkerDeps {
  transport: Transport;
  chat: ChatChannelConfig;
  events: EventStore;
  keys: LinkKeys;
  clock: Clock;
  /** {auth_url}, known once the authorization server listens. */
  authUrl: () => string;
  log?: { warn(obj: object, msg: string): void };
  /** Handlers of the bot's buttons by callback_data prefix (src/core/notify/actions.ts). */
  actions?: ChatActions;
  /** `/start <code>`: the one-time codes made at /account/security. */
  codes?: LinkCodeRedeemer;
}

/**
 * The notification bot's side of linking: long-polls getUpdates on the Bot
 * API, answers `/start` with a one-time link to open while signed in, and
 * `/stop` by unlinking that chat. Works against any Telegram-compatible API.
 */
export class ChatLinker {
  private offset = 0;
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  /** The bot's username (getMe), named on the confirmation page; asked once. */
  private me: Promise<string | undefined> | undefined;

  constructor(private readonly deps: LinkerDeps) {}

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private call(method: string, params: Record<string, unknown>, timeoutMs: number, responseBytes?: number) {
    const url = `${this.deps.chat.apiUrl.replace(/\/+$/, '')}/bot${this.deps.chat.token}/${method}`;
    return this.deps.transport.post({
      url, headers: { 'content-type': 'application/json' }, body: JSON.stringify(params), timeoutMs, signal: this.abort.signal,
      ...(responseBytes ? { responseBytes } : {}),
    });
  }

  private async loop(): Promise<void> {
    while (!this.abort.signal.aborted) {
      const a = await this.call('getUpdates', { offset: this.offset, timeout: 20, limit: 20, allowed_updates: this.deps.actions ? ['message', 'callback_query'] : ['message'] }, 30_000, 1 << 20);
      if (this.abort.signal.aborted) return;
      let updates: BotUpdate[] | undefined;
      try {
        const body = JSON.parse(a.excerpt) as { ok?: boolean; result?: BotUpdate[] };
        if (body.ok) updates = body.result;
      } catch {
        // Not an answer (network error, a proxy's page): wait and try again.
      }
      if (!updates) {
        this.deps.log?.warn({ status: a.status, error: a.error }, 'notification bot: getUpdates failed');
        // Back off (a second poller makes the Bot API answer 409), but stop at once when asked.
        await new Promise<void>((r) => {
          const t = setTimeout(r, 2000);
          this.abort.signal.addEventListener('abort', () => (clearTimeout(t), r()), { once: true });
        });
        continue;
      }
      for (const u of updates) {
        this.offset = Math.max(this.offset, u.update_id + 1);
        await this.handle(u).catch((err) => this.deps.log?.warn({ err }, 'notification bot: handling a message failed'));
      }
    }
  }

  /** A button press: the registered handler decides; the answer and the edited message tell the outcome. */
  private async press(q: NonNullable<BotUpdate['callback_query']>): Promise<void> {
    const chatId = q.message?.chat?.id;
    if (!q.id || !this.deps.actions) return;
    const outcome = chatId === undefined || typeof q.data !== 'string'
      ? { answer: 'This button no longer works.' }
      : await this.deps.actions.dispatch(q.data, { chatId: String(chatId), messageId: q.message?.message_id, now: this.deps.clock.now() });
    // The message shows the outcome before the press is answered: whoever sees the answer sees no live button.
    if (outcome.editText !== undefined && chatId !== undefined && q.message?.message_id !== undefined) {
      await this.call('editMessageText', { chat_id: chatId, message_id: q.message.message_id, text: outcome.editText, reply_markup: { inline_keyboard: [] } }, 10_000);
    }
    await this.call('answerCallbackQuery', { callback_query_id: q.id, text: outcome.answer, ...(outcome.showAlert ? { show_alert: true } : {}) }, 10_000);
  }

  private username(): Promise<string | undefined> {
    this.me ??= this.call('getMe', {}, 10_000).then((a) => {
      const body = JSON.parse(a.excerpt) as { ok?: boolean; result?: { username?: unknown } };
      return body.ok ? claim(body.result?.username) : undefined;
    }).catch(() => undefined);
    return this.me;
  }

  /** `/start <code>`: the chat is linked to whoever made the code at /account/security in the last 10 minutes. */
  private async redeem(code: string, chat: string): Promise<string> {
    const r = await this.deps.codes?.redeem(code, chat);
    if (!r?.ok) return `This code does not work: it was used already, it is older than 10 minutes, or it was mistyped. Get a new one at ${this.deps.authUrl()}/account/security while signed in.`;
    return `This chat is now linked to the Gatehouse account ${r.username}. It gets the account's security notifications and can approve its sign-ins, devices and applications' requests, end its sessions and lock it. Send /stop to end it.`;
  }

  async handle(u: BotUpdate): Promise<void> {
    if (u.callback_query) return this.press(u.callback_query);
    const text = u.message?.text?.trim() ?? '';
    const chatId = u.message?.chat?.id;
    if (chatId === undefined) return;
    const chat = String(chatId);
    const now = this.deps.clock.now();
    let reply: string;
    const custom = await this.deps.actions?.command(text, chat, now);
    if (custom) {
      await this.call('sendMessage', JSON.parse(sendMessageRequest(this.deps.chat, chat, custom.text, 10_000, custom.buttons).body) as Record<string, unknown>, 10_000);
      return;
    }
    const code = /^\/start(?:@\S+)?\s+(\S+)/.exec(text)?.[1];
    if (code) {
      reply = await this.redeem(code, chat);
    } else if (/^\/start(\s|@|$)/.test(text)) {
      const issuer = this.deps.authUrl();
      const from = u.message?.chat ?? {};
      const name = [from.first_name, from.last_name].filter(Boolean).join(' ') || from.title;
      const about: LinkAbout = { ...(name ? { chatName: name } : {}), ...(from.username ? { chatUsername: from.username } : {}) };
      const bot = await this.username();
      const link = `${issuer}${LINK_PATH}?token=${encodeURIComponent(linkToken(this.deps.keys, issuer, chat, now, bot ? { ...about, bot } : about))}`;
      reply = `To link this chat to your Gatehouse account, open ${issuer}/account/security while signed in and follow "Link a chat": it gives you a code to send here.\n\nOr open this link while signed in; it works once, for 10 minutes, and says what this chat will be able to do:\n${link}\n\nSend /stop to end the notifications.`;
    } else if (/^\/stop(\s|@|$)/.test(text)) {
      let n = 0;
      for (const e of await this.deps.events.endpoints.list()) {
        if (e.kind === 'chat' && e.userId !== null && e.chatId === chat && (await this.deps.events.endpoints.delete(e.id))) n++;
      }
      reply = n ? 'Done: you will receive no more notifications here.' : 'This chat receives no notifications.';
    } else {
      reply = 'Send /start to receive your security notifications here, /stop to end them; /sessions and /apps list your sessions and applications to end.';
    }
    await this.call('sendMessage', JSON.parse(sendMessageRequest(this.deps.chat, chat, reply, 10_000).body) as Record<string, unknown>, 10_000);
  }
}
