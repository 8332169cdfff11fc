import { randomBytes } from 'node:crypto';
import { sha256 } from '../crypto.js';
import type { Clock, UserStore } from '../ports.js';
import type { NotifyBotIdentity } from '../bot/notify-bot.js';
import { attachChat, type LinkCodeRedeemer } from './link.js';
import type { EventStore, LinkCodeStore } from './ports.js';

/** A code links a chat for 10 minutes after it was shown (issue 24, finding 7). */
export const LINK_CODE_TTL_MS = 10 * 60_000;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** 16 letters of base32: 80 bits, out of reach of guessing in 10 minutes; fits a Telegram start parameter. */
const CODE = /^[a-z2-7]{16}$/;

function newCode(): string {
  const bytes = randomBytes(10);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}

/**
 * Linking a chat, started signed in (docs/security.md, "How a link is made"):
 * /account/security makes a one-time code, and the chat that sends
 * `/start <code>` to the notification bot within 10 minutes is linked to that
 * person. The code is kept by SHA-256 only and burnt by the read that uses it,
 * so a phished link can no longer attach an attacker's chat: whoever holds the
 * code was signed in as the person.
 */
export interface ChatLinkCodesDeps {
  codes: LinkCodeStore;
  events: EventStore;
  users: UserStore;
  clock: Clock;
  /** The notification bot when it is one of this server's bots: its chat opens in the chat page at {bot_api_url}. */
  notifyBot: NotifyBotIdentity;
  botApiUrl: string;
  /** On another Bot API: its URL and the bot's username (getMe), for a Telegram deep link. */
  outside?: { apiUrl: string; username: () => Promise<string | undefined> };
}

export class ChatLinkCodes implements LinkCodeRedeemer {
  constructor(private readonly deps: ChatLinkCodesDeps) {}

  /**
   * Where the person opens the bot's chat with `/start <code>` ready to send: the chat
   * page (`#chat=<bot>&start=<code>`) on this server, `https://t.me/<bot>?start=<code>`
   * on Telegram; undefined when no such link is known (the page says what to send).
   */
  async chatLink(code: string): Promise<{ url: string | undefined; bot: string | undefined }> {
    const own = await this.deps.notifyBot.bot();
    if (own) return { url: `${this.deps.botApiUrl}/#${new URLSearchParams({ chat: own.username, start: code })}`, bot: own.username };
    const outside = this.deps.outside;
    const username = await outside?.username();
    if (!outside || !username) return { url: undefined, bot: username };
    const telegram = /(^|\.)telegram\.org$/i.test(new URL(outside.apiUrl).hostname);
    return { url: telegram ? `https://t.me/${encodeURIComponent(username)}?start=${code}` : undefined, bot: username };
  }

  /** A new code for the person (their earlier one stops working) and when it expires. */
  async issue(userId: string): Promise<{ code: string; expiresAt: number }> {
    const now = this.deps.clock.now();
    const code = newCode();
    const expiresAt = now + LINK_CODE_TTL_MS;
    await this.deps.codes.issue(userId, sha256(code), expiresAt, now);
    return { code, expiresAt };
  }

  async redeem(code: string, chatId: string): Promise<{ ok: true; username: string } | { ok: false }> {
    const typed = code.trim().toLowerCase();
    if (!CODE.test(typed)) return { ok: false };
    const userId = await this.deps.codes.consume(sha256(typed), this.deps.clock.now());
    const user = userId ? await this.deps.users.get(userId) : undefined;
    if (!user) return { ok: false };
    await attachChat(this.deps, user.id, chatId);
    return { ok: true, username: user.username };
  }
}
