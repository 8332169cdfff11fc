import type { MessageEntity, ParseMode } from '@grammyjs/types';
import { badRequest } from './errors.js';
import { parseHtml } from './markup/html.js';
import { parseMarkdown } from './markup/markdown.js';
import { parseMarkdownV2 } from './markup/markdown-v2.js';
import { MarkupError } from './markup/text.js';

export interface FormattedText {
  text: string;
  entities: MessageEntity[];
}

/** Explicit entities must lie inside the text they mark. */
function checkedEntities(entities: MessageEntity[], text: string): MessageEntity[] {
  entities.forEach((e, i) => {
    if (e.offset < 0 || e.length <= 0 || e.offset + e.length > text.length) throw badRequest(`can't parse entities: entity ${i} is out of the text`);
  });
  return entities;
}

/**
 * `text` with `parse_mode` (HTML, MarkdownV2, Markdown) or explicit
 * `entities`, as sendMessage and editMessageText take it. Invalid markup is
 * refused with the official server's wording.
 */
export function formatText(text: string, mode: ParseMode | undefined, entities: MessageEntity[] | undefined): FormattedText {
  try {
    switch (mode) {
      case undefined:
        return { text, entities: checkedEntities(entities ?? [], text) };
      case 'HTML':
        return parseHtml(text);
      case 'MarkdownV2':
        return parseMarkdownV2(text);
      case 'Markdown':
        return parseMarkdown(text);
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
