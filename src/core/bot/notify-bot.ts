import type { Clock } from '../ports.js';
import { CHAT_PAGE_CLIENT_ID } from './chat-page-client.js';
import type { BotRecord, BotStore } from './ports.js';
import { hashBotToken } from './token.js';

/** A miss is looked up again after this long (the bot may be created after start, or the token set later). */
const MISS_TTL_MS = 60_000;

/**
 * Which of this server's bots is the notification bot (GATEHOUSE_NOTIFY_BOT_TOKEN):
 * the one whose stored token hash is the setting's. Undefined when the setting is
 * unset or names a bot of another Bot API (Telegram): then no security prompt lives
 * in this server's chats. Found once, then kept (a bot's id never changes).
 */
export class NotifyBotIdentity {
  private found: BotRecord | undefined;
  private missedAt = -Infinity;
  private readonly hash: string | undefined;

  constructor(private readonly deps: { bots: BotStore; clock: Clock }, token: string | undefined) {
    this.hash = token ? hashBotToken(token) : undefined;
  }

  async bot(): Promise<BotRecord | undefined> {
    if (this.found || !this.hash) return this.found;
    const now = this.deps.clock.now();
    if (now - this.missedAt < MISS_TTL_MS) return undefined;
    this.found = await this.deps.bots.findByTokenHash(this.hash);
    if (!this.found) this.missedAt = now;
    return this.found;
  }
}

/**
 * Issue 24, finding 5: the notification bot's chat holds security prompts (sign-in
 * approval, device and CIBA approval, one-tap actions), so only Gatehouse's own chat
 * page (its first-party client) may see or press them. Any other application's
 * `chat` token is answered as if the bot did not exist.
 */
export const mayUseNotifyChat = (clientId: string): boolean => clientId === CHAT_PAGE_CLIENT_ID;
