import type { MessageEntity } from '@grammyjs/types';
import { MarkupError, byteOffset, entity, linkUrl, sortEntities } from './text.js';

/** Characters MarkdownV2 reserves outside entities (core.telegram.org/bots/api#markdownv2-style). */
const RESERVED = '_*[]()~`>#+-=|{}.!';

interface Open {
  type: 'bold' | 'italic' | 'underline' | 'strikethrough' | 'spoiler' | 'text_link' | 'custom_emoji';
  offset: number;
  begin: number;
}

const NAMES: Record<Open['type'], string> = {
  bold: 'Bold', italic: 'Italic', underline: 'Underline', strikethrough: 'Strikethrough', spoiler: 'Spoiler', text_link: 'TextUrl', custom_emoji: 'CustomEmoji',
};

const isAscii = (c: string | undefined) => c !== undefined && c.charCodeAt(0) > 0 && c.charCodeAt(0) <= 126;

/** Reads code or pre content up to the unescaped `fence`; only '`' and '\' are escaped inside. */
function readCode(s: string, i: number, fence: string): { content: string; next: number } | undefined {
  let content = '';
  while (i < s.length) {
    if (s[i] === '\\' && (s[i + 1] === '`' || s[i + 1] === '\\')) {
      content += s[i + 1];
      i += 2;
      continue;
    }
    if (s.startsWith(fence, i)) return { content, next: i + fence.length };
    content += s[i++];
  }
  return undefined;
}

/** The "(url)" after a link's text: ')' and '\' are escaped inside. */
function readUrl(s: string, i: number): { url: string; next: number } {
  const start = i;
  let url = '';
  i++;
  while (i < s.length && s[i] !== ')') {
    if (s[i] === '\\' && isAscii(s[i + 1])) {
      url += s[i + 1];
      i += 2;
    } else {
      url += s[i++];
    }
  }
  if (i >= s.length) throw new MarkupError(`Can't find end of a URL at byte offset ${byteOffset(s, start + 1)}`);
  return { url, next: i + 1 };
}

function customEmojiId(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new MarkupError('Custom emoji URL must have scheme tg');
  }
  if (u.protocol !== 'tg:') throw new MarkupError('Custom emoji URL must have scheme tg');
  if (u.hostname.toLowerCase() !== 'emoji') throw new MarkupError('Custom emoji URL must have host "emoji"');
  const id = u.searchParams.get('id');
  if (!id) throw new MarkupError('Custom emoji URL must have an emoji identifier');
  if (!/^[1-9][0-9]{0,18}$/.test(id)) throw new MarkupError('Invalid custom emoji identifier specified');
  return id;
}

/** parse_mode=MarkdownV2. */
export function parseMarkdownV2(s: string): { text: string; entities: MessageEntity[] } {
  let text = '';
  const entities: MessageEntity[] = [];
  const stack: Open[] = [];
  let quoteStart = -1;
  const push = (type: string, offset: number, extra: Record<string, string> = {}) => {
    if (text.length > offset) entities.push(entity(type, offset, text.length - offset, extra));
  };
  const closeQuote = () => {
    if (quoteStart >= 0) push('blockquote', quoteStart);
    quoteStart = -1;
  };
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    const lineStart = i === 0 || s[i - 1] === '\n' || s[i - 1] === '\r';
    if (lineStart && c === '>' ) {
      if (quoteStart < 0) quoteStart = text.length;
      i++;
      continue;
    }
    if (lineStart && quoteStart >= 0 && c !== '\n' && c !== '\r') closeQuote();
    if (c === '\\' && isAscii(s[i + 1])) {
      text += s[i + 1];
      i += 2;
      continue;
    }
    if (!RESERVED.includes(c)) {
      text += c;
      i++;
      continue;
    }
    const top = stack[stack.length - 1];
    // Closing the innermost entity?
    if (top) {
      let len = 0;
      if (top.type === 'bold' && c === '*') len = 1;
      else if (top.type === 'italic' && c === '_' && s[i + 1] !== '_') len = 1;
      else if (top.type === 'italic' && c === '_' && s.startsWith('___', i) && stack[stack.length - 2]?.type === 'underline') len = 1;
      else if (top.type === 'underline' && s.startsWith('__', i)) len = 2;
      else if (top.type === 'strikethrough' && c === '~') len = 1;
      else if (top.type === 'spoiler' && s.startsWith('||', i)) len = 2;
      else if ((top.type === 'text_link' || top.type === 'custom_emoji') && c === ']') len = 1;
      if (len) {
        stack.pop();
        i += len;
        if (top.type === 'text_link') {
          let url = text.slice(top.offset);
          if (s[i] === '(') ({ url, next: i } = readUrl(s, i));
          const target = linkUrl(url);
          if (target) push('text_link', top.offset, { url: target });
        } else if (top.type === 'custom_emoji') {
          if (s[i] !== '(') throw new MarkupError('Custom emoji entity must contain a tg://emoji URL');
          const r = readUrl(s, i);
          i = r.next;
          push('custom_emoji', top.offset, { custom_emoji_id: customEmojiId(r.url) });
        } else {
          push(top.type, top.offset);
        }
        continue;
      }
    }
    const begin = i;
    if (c === '`') {
      const pre = s.startsWith('```', i);
      if (pre) {
        i += 3;
        const language = /^[^\s`]*/.exec(s.slice(i))![0];
        const withLanguage = language.length > 0 && /\s/.test(s[i + language.length] ?? '');
        if (withLanguage) i += language.length;
        if (s.startsWith('\r\n', i)) i += 2;
        else if (s[i] === '\n' || s[i] === '\r') i++;
        const r = readCode(s, i, '```');
        if (!r) throw new MarkupError(`Can't find end of ${withLanguage ? 'PreCode' : 'Pre'} entity at byte offset ${byteOffset(s, begin)}`);
        const offset = text.length;
        text += r.content;
        push('pre', offset, withLanguage ? { language } : {});
        i = r.next;
      } else {
        const r = readCode(s, i + 1, '`');
        if (!r) throw new MarkupError(`Can't find end of Code entity at byte offset ${byteOffset(s, begin)}`);
        const offset = text.length;
        text += r.content;
        push('code', offset);
        i = r.next;
      }
      continue;
    }
    let open: Open['type'] | undefined;
    let len = 1;
    if (c === '*') open = 'bold';
    else if (c === '_') [open, len] = s[i + 1] === '_' ? ['underline', 2] : ['italic', 1];
    else if (c === '~') open = 'strikethrough';
    else if (c === '|' && s[i + 1] === '|') [open, len] = ['spoiler', 2];
    else if (c === '[') open = 'text_link';
    else if (c === '!' && s[i + 1] === '[') [open, len] = ['custom_emoji', 2];
    if (!open) throw new MarkupError(`Character '${c}' is reserved and must be escaped with the preceding '\\'`);
    stack.push({ type: open, offset: text.length, begin });
    i += len;
  }
  const unclosed = stack[stack.length - 1];
  if (unclosed) throw new MarkupError(`Can't find end of ${NAMES[unclosed.type]} entity at byte offset ${byteOffset(s, unclosed.begin)}`);
  closeQuote();
  return { text, entities: sortEntities(entities) };
}
