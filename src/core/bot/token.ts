import { randomBytes, randomInt } from 'node:crypto';
import { sha256 } from '../crypto.js';

/** `<bot id>:<35 characters of A-Za-z0-9_->`, the shape every Telegram client expects. */
export const TOKEN_SHAPE = /^([1-9][0-9]{0,15}):([A-Za-z0-9_-]{35})$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

/** 35 characters from a 64-letter alphabet: 210 bits, more than RFC 6819 §5.1.4.2.2 asks. */
export function newBotToken(botId: number): string {
  const bytes = randomBytes(35);
  let secret = '';
  for (const b of bytes) secret += ALPHABET[b & 63];
  return `${botId}:${secret}`;
}

/** Tokens are stored only as SHA-256 (high entropy, so a fast hash suffices; RFC 6819 §5.1.4.1.3). */
export const hashBotToken = (token: string): string => sha256(token);

/** The bot id a well-formed token names, or undefined for anything else. */
export function tokenBotId(token: string): number | undefined {
  const m = TOKEN_SHAPE.exec(token);
  if (!m) return undefined;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * User and bot ids: positive, 10 digits like Telegram's, well inside 52 bits
 * so JavaScript clients keep them exact.
 */
export const newAccountId = (): number => randomInt(1_000_000_000, 2 ** 40);

/** update_id starts at a random positive number and increases by one (Bot API, Update). */
export const firstUpdateId = (): number => randomInt(1, 2 ** 30);
