import { randomUUID } from 'node:crypto';
import type { Clock, UserStore } from '../ports.js';
import { BotUsernameTakenError, type BotRecord, type BotStorage } from './ports.js';
import { hashBotToken, newAccountId, newBotToken } from './token.js';
import { recordEvent } from '../notify/record.js';

/** Bot management shared by BotFather and `gatehouse bot create`. */

export const BOTFATHER = 'BotFather';

/** Telegram's rule: 5–32 of Latin letters, digits and underscores, ending in "bot", starting with a letter. */
export function usernameProblem(username: string): string | undefined {
  if (!/bot$/i.test(username)) return "Sorry, the username must end in 'bot'. E.g. 'Tetris_bot' or 'Tetrisbot'";
  if (username.length < 5 || username.length > 32 || !/^[A-Za-z][A-Za-z0-9_]*$/.test(username)) {
    return 'Sorry, this username is invalid. It must be 5 to 32 characters long: Latin letters, digits and underscores, starting with a letter.';
  }
  return undefined;
}

export function nameProblem(name: string): string | undefined {
  const n = name.trim();
  if (!n || n.length > 64) return 'Sorry, the name must be 1 to 64 characters long.';
  return undefined;
}

/** A bot name or username BotFather or the CLI refuses: a chat reply or a CLI message, never an HTTP answer. */
export class BotInputError extends Error {
  override name = 'BotInputError';
}

export interface CreatedBot {
  bot: BotRecord;
  /** Shown once; only its hash is stored. */
  token: string;
}

export async function createBot(storage: BotStorage, clock: Clock, input: { ownerUserId: string; username: string; name: string }): Promise<CreatedBot> {
  const problem = usernameProblem(input.username) ?? nameProblem(input.name);
  if (problem) throw new BotInputError(problem);
  if (await storage.bots.findByUsername(input.username)) throw new BotUsernameTakenError(input.username);
  // A random id may (rarely) collide with an existing bot: try a few.
  for (let attempt = 0; ; attempt++) {
    const id = newAccountId();
    if (await storage.bots.get(id)) {
      if (attempt < 5) continue;
    }
    const token = newBotToken(id);
    const record = { id, username: input.username, name: input.name.trim(), ownerUserId: input.ownerUserId, tokenHash: hashBotToken(token), createdAt: clock.now() };
    await storage.transaction(async (tx) => {
      await tx.bots.create(record);
      await recordEvent(tx, 'bot.created', { bot_id: id, username: record.username, owner_user_id: record.ownerUserId }, record.createdAt);
    });
    return { bot: { ...record, webhook: null, allowedUpdates: null, lastErrorDate: null, lastErrorMessage: null }, token };
  }
}

/** A new token; the old one stops working at once (BotFather /revoke). */
export async function rotateBotToken(storage: BotStorage, bot: BotRecord): Promise<string> {
  const token = newBotToken(bot.id);
  await storage.bots.setTokenHash(bot.id, hashBotToken(token));
  return token;
}

/**
 * BotFather is a user named BotFather (so people can find it by name) and an
 * in-process bot account without a token. Created on first start.
 */
export async function ensureBotFather(storage: BotStorage, users: UserStore, clock: Clock): Promise<BotRecord> {
  const existing = await storage.bots.findByUsername(BOTFATHER);
  if (!(await users.findByUsername(BOTFATHER))) {
    try {
      // '!' is no argon2 hash: nobody can sign in as BotFather.
      await users.create({ id: randomUUID(), username: BOTFATHER, email: 'botfather@gatehouse.invalid', name: BOTFATHER, passwordHash: '!', createdAt: clock.now() });
    } catch {
      // Another process created it meanwhile.
    }
  }
  if (existing) return existing;
  try {
    await storage.bots.create({ id: newAccountId(), username: BOTFATHER, name: BOTFATHER, ownerUserId: null, tokenHash: null, createdAt: clock.now() });
  } catch (e) {
    if (!(e instanceof BotUsernameTakenError)) throw e;
  }
  return (await storage.bots.findByUsername(BOTFATHER))!;
}
