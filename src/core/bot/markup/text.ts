import type { MessageEntity } from '@grammyjs/types';

/**
 * Invalid markup; the message is the official server's text after "can't
 * parse entities: ". The formatter turns it into a Bot API `badRequest`
 * (src/core/bot/format.ts), so it is never an answer itself.
 */
export class MarkupError extends Error {
  override name = 'MarkupError';
}

/** Error positions are UTF-8 byte offsets in the official server; entity offsets are UTF-16 units (JS indices). */
export const byteOffset = (s: string, index: number): number => Buffer.byteLength(s.slice(0, index), 'utf8');

/**
 * A text_link target as Telegram normalises it: http(s), tg and ton links as
 * given, a bare domain gets "http://"; anything else makes no link.
 */
export function linkUrl(raw: string): string | undefined {
  const s = raw.trim();
  if (!s) return undefined;
  if (/^tg:/i.test(s)) return s.replace(/^tg:(\/\/)?/i, 'tg://');
  if (/^ton:\/\//i.test(s)) return s;
  const candidate = /^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : `http://${s}`;
  try {
    const u = new URL(candidate);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    // A bare word is no host ("[ ](as)" makes no link).
    if (!u.hostname.includes('.') && u.hostname !== 'localhost' && !u.hostname.startsWith('[')) return undefined;
    return u.href;
  } catch {
    return undefined;
  }
}

/** Bot API order: by offset, longer (outer) entities first. */
export function sortEntities(entities: MessageEntity[]): MessageEntity[] {
  return entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
}

export function entity(type: string, offset: number, length: number, extra: Record<string, string> = {}): MessageEntity {
  return { type, offset, length, ...extra } as MessageEntity;
}
