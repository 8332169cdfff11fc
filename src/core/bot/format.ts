import type { MessageEntity } from '@grammyjs/types';
import { badRequest } from './errors.js';
import { parseHtml } from './markup/html.js';
import { parseMarkdown } from './markup/markdown.js';
import { parseMarkdownV2 } from './markup/markdown-v2.js';
import { MarkupError } from './markup/text.js';
import { json, str, type BotParams } from './params.js';

export interface FormattedText {
  text: string;
  entities: MessageEntity[];
}

const ENTITY_TYPES = new Set(['mention', 'hashtag', 'cashtag', 'bot_command', 'url', 'email', 'phone_number', 'bold', 'italic', 'underline',
  'strikethrough', 'spoiler', 'blockquote', 'expandable_blockquote', 'code', 'pre', 'text_link', 'text_mention', 'custom_emoji']);

/** Explicit `entities` (instead of parse_mode): checked, not trusted. */
function explicitEntities(p: BotParams, name: string, text: string): MessageEntity[] {
  const raw = json(p, name, 'message entities');
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw badRequest("can't parse entities JSON object");
  return raw.map((e, i) => {
    const o = e as Record<string, unknown>;
    if (!o || typeof o !== 'object' || typeof o.type !== 'string' || !Number.isInteger(o.offset) || !Number.isInteger(o.length)) {
      throw badRequest(`can't parse entities: entity ${i} is malformed`);
    }
    if (!ENTITY_TYPES.has(o.type)) throw badRequest(`can't parse entities: unsupported entity type "${o.type}"`);
    const offset = o.offset as number;
    const length = o.length as number;
    if (offset < 0 || length <= 0 || offset + length > text.length) throw badRequest(`can't parse entities: entity ${i} is out of the text`);
    const out: Record<string, unknown> = { type: o.type, offset, length };
    if (o.type === 'text_link') {
      if (typeof o.url !== 'string' || !/^(https?|tg):/i.test(o.url)) throw badRequest('wrong HTTP URL specified');
      out.url = o.url;
    }
    if (o.type === 'pre' && typeof o.language === 'string') out.language = o.language;
    if (o.type === 'custom_emoji' && typeof o.custom_emoji_id === 'string') out.custom_emoji_id = o.custom_emoji_id;
    return out as unknown as MessageEntity;
  });
}

/**
 * `text` with `parse_mode` (HTML, MarkdownV2, Markdown; case-insensitive) or
 * explicit `entities`, as sendMessage and editMessageText take it. Invalid
 * markup is refused with the official server's wording.
 */
export function formatText(p: BotParams, textName = 'text', entitiesName = 'entities'): FormattedText {
  const raw = str(p, textName) ?? '';
  const mode = (str(p, 'parse_mode') ?? '').trim().toLowerCase();
  try {
    switch (mode) {
      case '':
        return { text: raw, entities: explicitEntities(p, entitiesName, raw) };
      case 'html':
        return parseHtml(raw);
      case 'markdownv2':
        return parseMarkdownV2(raw);
      case 'markdown':
        return parseMarkdown(raw);
      default:
        throw badRequest('unsupported parse_mode');
    }
  } catch (e) {
    if (e instanceof MarkupError) throw badRequest(`can't parse entities: ${e.message}`);
    throw e;
  }
}

/** Telegram trims surrounding whitespace; entities move with the text. */
export function trimFormatted(f: FormattedText): FormattedText {
  const start = f.text.length - f.text.trimStart().length;
  const text = f.text.trim();
  if (start === 0 && text.length === f.text.length) return f;
  const entities = f.entities
    .map((e) => {
      const from = Math.max(e.offset - start, 0);
      const to = Math.min(e.offset + e.length - start, text.length);
      return { ...e, offset: from, length: to - from };
    })
    .filter((e) => e.length > 0);
  return { text, entities };
}
