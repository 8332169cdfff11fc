import type { MessageEntity } from '@grammyjs/types';
import { MarkupError, byteOffset, entity, linkUrl, sortEntities } from './text.js';

/**
 * parse_mode=Markdown, the legacy style: *bold*, _italic_, `code`, ```pre```
 * and [text](url), no nesting; '\' escapes _ * ` [ outside entities.
 */
export function parseMarkdown(s: string): { text: string; entities: MessageEntity[] } {
  let text = '';
  const entities: MessageEntity[] = [];
  const fail = (begin: number) => new MarkupError(`Can't find end of the entity starting at byte offset ${byteOffset(s, begin)}`);
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\' && '_*`['.includes(s[i + 1] ?? ' ')) {
      text += s[i + 1];
      i += 2;
      continue;
    }
    if (!'_*`['.includes(c)) {
      text += c;
      i++;
      continue;
    }
    const begin = i;
    const offset = text.length;
    if (c === '[') {
      const close = s.indexOf(']', i + 1);
      if (close < 0) throw fail(begin);
      const label = s.slice(i + 1, close);
      i = close + 1;
      let url = label;
      if (s[i] === '(') {
        const end = s.indexOf(')', i + 1);
        if (end < 0) throw fail(begin);
        url = s.slice(i + 1, end);
        i = end + 1;
      }
      text += label;
      const target = linkUrl(url);
      if (target && label) entities.push(entity('text_link', offset, label.length, { url: target }));
      continue;
    }
    if (s.startsWith('```', i)) {
      const end = s.indexOf('```', i + 3);
      if (end < 0) throw fail(begin);
      let body = s.slice(i + 3, end);
      let language: string | undefined;
      const nl = /^([^\s`]+)\r?\n/.exec(body);
      if (nl) {
        language = nl[1];
        body = body.slice(nl[0].length);
      } else if (/^\r?\n/.test(body)) {
        body = body.replace(/^\r?\n/, '');
      }
      text += body;
      if (body) entities.push(entity('pre', offset, body.length, language ? { language } : {}));
      i = end + 3;
      continue;
    }
    const end = s.indexOf(c, i + 1);
    if (end < 0) throw fail(begin);
    const body = s.slice(i + 1, end);
    text += body;
    if (body) entities.push(entity(c === '*' ? 'bold' : c === '_' ? 'italic' : 'code', offset, body.length));
    i = end + 1;
  }
  return { text, entities: sortEntities(entities) };
}
