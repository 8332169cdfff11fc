import type { NotifyBotIdentity } from '../bot/notify-bot.js';
import type { PersonStore } from '../bot/ports.js';
import type { LinkClaims } from './link.js';

/** The chat a link would attach, as the confirmation page names it. */
export interface LinkTarget {
  /** The notification bot: its name and username, as far as known. */
  bot: { name?: string; username?: string };
  /** The chat's person: name and username as known, and the chat id. */
  chat: { id: string; name?: string; username?: string };
  /**
   * On Gatehouse's own chat service, the account whose chat it is (null when no
   * person has that chat id); undefined on another Bot API, where nobody can tell.
   */
  ownerUserId?: string | null;
}

/**
 * Who may confirm a link made by `/start` (issue 24, finding 7): an attacker
 * forwarding the link of their own chat must not get it confirmed by the
 * victim. On Gatehouse's own chat service the chat's person is known, so only
 * that person may confirm; elsewhere the page names the chat and what it will
 * be able to approve, and the person decides.
 */
export class LinkTargets {
  constructor(private readonly deps: { notifyBot: NotifyBotIdentity; people: PersonStore }) {}

  async describe(link: LinkClaims): Promise<LinkTarget> {
    const own = await this.deps.notifyBot.bot();
    if (!own) {
      return {
        bot: link.bot ? { username: link.bot } : {},
        chat: { id: link.chatId, ...(link.chatName ? { name: link.chatName } : {}), ...(link.chatUsername ? { username: link.chatUsername } : {}) },
      };
    }
    // Our private chats' ids are the people's ids (src/core/bot/conversations.ts).
    const person = /^[1-9][0-9]{0,15}$/.test(link.chatId) ? await this.deps.people.getById(Number(link.chatId)) : undefined;
    return {
      bot: { name: own.name, username: own.username },
      chat: { id: link.chatId, ...(person?.name ? { name: person.name } : {}), ...(person ? { username: person.username } : {}) },
      ownerUserId: person?.userId ?? null,
    };
  }

  /** The one check: may `userId` link this chat? */
  static mayConfirm(target: LinkTarget, userId: string): boolean {
    return target.ownerUserId === undefined || target.ownerUserId === userId;
  }

  async mayConfirm(link: LinkClaims, userId: string): Promise<boolean> {
    return LinkTargets.mayConfirm(await this.describe(link), userId);
  }
}
