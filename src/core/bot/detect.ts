import type { MessageEntity } from '@grammyjs/types';

/**
 * Entities Telegram finds by itself in what a person types: bot commands
 * (grammY's and telegraf's command handlers look for them), mentions,
 * hashtags and links. JavaScript string indices are UTF-16 code units, the
 * unit of entity offsets.
 */
const PATTERNS: { type: MessageEntity.CommonMessageEntity['type']; re: RegExp }[] = [
  { type: 'bot_command', re: /(?<![\p{L}\p{N}_/<>])\/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![\p{L}\p{N}_/<>])/gu },
  { type: 'mention', re: /(?<![\p{L}\p{N}_])@[A-Za-z0-9_]{2,32}(?![\p{L}\p{N}_])/gu },
  { type: 'hashtag', re: /(?<![\p{L}\p{N}_#])#[\p{L}\p{N}_]*\p{L}[\p{L}\p{N}_]*(?![\p{L}\p{N}_]*#)/gu },
  { type: 'url', re: /\bhttps?:\/\/[^\s<>"]+[^\s<>".,;:!?)'\]]/giu },
];

export function detectEntities(text: string): MessageEntity[] {
  const found: MessageEntity[] = [];
  for (const { type, re } of PATTERNS) {
    for (const m of text.matchAll(re)) {
      const offset = m.index!;
      if (found.some((e) => offset < e.offset + e.length && e.offset < offset + m[0].length)) continue;
      found.push({ type, offset, length: m[0].length } as MessageEntity);
    }
  }
  return found.sort((a, b) => a.offset - b.offset);
}
