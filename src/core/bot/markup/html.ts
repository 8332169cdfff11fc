import type { MessageEntity } from '@grammyjs/types';
import { MarkupError, byteOffset, entity, linkUrl, sortEntities } from './text.js';

/** Tags of the Bot API's HTML style (core.telegram.org/bots/api#html-style). */
const TAGS = new Set(['a', 'b', 'strong', 'i', 'em', 's', 'strike', 'del', 'u', 'ins', 'tg-spoiler', 'tg-emoji', 'span', 'pre', 'code', 'blockquote']);
// Maps, not object literals: a name from the text (`&constructor;`) must find nothing inherited.
const SIMPLE: ReadonlyMap<string, string> = new Map(Object.entries({
  b: 'bold', strong: 'bold', i: 'italic', em: 'italic', s: 'strikethrough', strike: 'strikethrough', del: 'strikethrough',
  u: 'underline', ins: 'underline', 'tg-spoiler': 'spoiler', span: 'spoiler',
}));
const NAMED: ReadonlyMap<string, string> = new Map(Object.entries({ lt: '<', gt: '>', amp: '&', quot: '"' }));
const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

interface Open {
  tag: string;
  attrs: Map<string, string>;
  offset: number;
  begin: number;
}

/** Decodes one character reference at `i` (which is '&'); undefined when it is none we know. */
function decodeEntity(s: string, i: number): { text: string; next: number } | undefined {
  const named = /^&([a-zA-Z]+);?/.exec(s.slice(i, i + 12));
  if (named) {
    const v = NAMED.get(named[1]!.toLowerCase() === named[1] ? named[1]! : '');
    return v === undefined ? undefined : { text: v, next: i + named[0].length };
  }
  const num = /^&#(?:([0-9]{1,8})|[xX]([0-9a-fA-F]{1,7}));?/.exec(s.slice(i, i + 14));
  if (!num) return undefined;
  const code = num[1] !== undefined ? Number(num[1]) : parseInt(num[2]!, 16);
  if (code === 0 || code > 0x10ffff) return undefined;
  if (code >= 0xd800 && code <= 0xdfff) {
    throw new MarkupError('Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units');
  }
  return { text: String.fromCodePoint(code), next: i + num[0].length };
}

function decodeText(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; ) {
    const d = s[i] === '&' ? decodeEntity(s, i) : undefined;
    if (d) {
      out += d.text;
      i = d.next;
    } else {
      out += s[i++];
    }
  }
  return out;
}

/** Reads the attributes of a start tag from `i` to its '>'; returns them and the index after '>'. */
function readAttributes(s: string, i: number, tag: string, begin: number): { attrs: Map<string, string>; next: number } {
  const attrs = new Map<string, string>();
  const at = () => byteOffset(s, begin);
  while (s[i] !== '>') {
    while (isSpace(s[i])) i++;
    if (s[i] === '>') break;
    if (i >= s.length) throw new MarkupError(`Unclosed start tag "${tag}" at byte offset ${at()}`);
    const nameStart = i;
    while (i < s.length && !isSpace(s[i]) && s[i] !== '=' && s[i] !== '>') i++;
    const name = s.slice(nameStart, i).toLowerCase();
    if (!name) throw new MarkupError(`Empty attribute name in the tag "${tag}" at byte offset ${at()}`);
    while (isSpace(s[i])) i++;
    if (s[i] !== '=') {
      // <blockquote expandable> is the one attribute without a value.
      if (tag === 'blockquote' && name === 'expandable' && (s[i] === '>' || i < s.length)) {
        attrs.set(name, '');
        continue;
      }
      if (i >= s.length) throw new MarkupError(`Unclosed start tag "${tag}" at byte offset ${at()}`);
      throw new MarkupError(`Expected equal sign in declaration of an attribute of the tag "${tag}" at byte offset ${at()}`);
    }
    i++;
    while (isSpace(s[i])) i++;
    if (i >= s.length) throw new MarkupError(`Unclosed start tag "${tag}" at byte offset ${at()}`);
    let value: string;
    if (s[i] === '"' || s[i] === "'") {
      const close = s.indexOf(s[i]!, i + 1);
      if (close < 0) throw new MarkupError(`Unclosed start tag at byte offset ${at()}`);
      value = decodeText(s.slice(i + 1, close));
      i = close + 1;
    } else {
      const start = i;
      while (i < s.length && /[A-Za-z0-9.-]/.test(s[i]!)) i++;
      if (i < s.length && !isSpace(s[i]) && s[i] !== '>') throw new MarkupError(`Unexpected end of name token at byte offset ${byteOffset(s, start)}`);
      if (i >= s.length) throw new MarkupError(`Unclosed start tag "${tag}" at byte offset ${at()}`);
      value = s.slice(start, i);
    }
    if (!attrs.has(name)) attrs.set(name, value);
  }
  return { attrs, next: i + 1 };
}

function close(open: Open, end: number, text: string, stack: Open[], entities: MessageEntity[]): void {
  const length = end - open.offset;
  const { tag, attrs } = open;
  if (tag === 'a') {
    const url = linkUrl(attrs.get('href') ?? text.slice(open.offset, end));
    if (url && length > 0) entities.push(entity('text_link', open.offset, length, { url }));
    return;
  }
  if (length <= 0) return;
  const simple = SIMPLE.get(tag);
  if (simple) {
    entities.push(entity(simple, open.offset, length));
  } else if (tag === 'tg-emoji') {
    entities.push(entity('custom_emoji', open.offset, length, { custom_emoji_id: attrs.get('emoji-id')! }));
  } else if (tag === 'blockquote') {
    entities.push(entity(attrs.has('expandable') ? 'expandable_blockquote' : 'blockquote', open.offset, length));
  } else if (tag === 'code') {
    const language = /^language-(.+)$/.exec(attrs.get('class') ?? '')?.[1];
    const parent = stack[stack.length - 1];
    // <pre><code class="language-x"> is one pre entity with a language.
    if (parent?.tag === 'pre') {
      if (language) parent.attrs.set('language', language);
      return;
    }
    entities.push(entity('code', open.offset, length));
  } else if (tag === 'pre') {
    const language = attrs.get('language');
    entities.push(entity('pre', open.offset, length, language ? { language } : {}));
  }
}

/** parse_mode=HTML. */
export function parseHtml(s: string): { text: string; entities: MessageEntity[] } {
  let text = '';
  const entities: MessageEntity[] = [];
  const stack: Open[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '&') {
      const d = decodeEntity(s, i);
      if (d) {
        text += d.text;
        i = d.next;
        continue;
      }
    }
    if (c !== '<') {
      text += c;
      i++;
      continue;
    }
    const begin = i;
    i++;
    if (s[i] !== '/') {
      while (i < s.length && !isSpace(s[i]) && s[i] !== '>') i++;
      if (i >= s.length) throw new MarkupError(`Unclosed start tag at byte offset ${byteOffset(s, begin)}`);
      const tag = s.slice(begin + 1, i).toLowerCase();
      if (!TAGS.has(tag)) throw new MarkupError(`Unsupported start tag "${tag}" at byte offset ${byteOffset(s, begin)}`);
      const { attrs, next } = readAttributes(s, i, tag, begin);
      i = next;
      if (tag === 'span' && attrs.get('class') !== 'tg-spoiler') throw new MarkupError(`Tag "span" must have class "tg-spoiler" at byte offset ${byteOffset(s, begin)}`);
      if (tag === 'tg-emoji' && !/^[1-9][0-9]{0,18}$/.test(attrs.get('emoji-id') ?? '')) throw new MarkupError('Invalid custom emoji identifier specified');
      stack.push({ tag, attrs, offset: text.length, begin });
      continue;
    }
    // An end tag; "</>" closes whatever is open.
    i++;
    const nameStart = i;
    while (i < s.length && !isSpace(s[i]) && s[i] !== '>') i++;
    const name = s.slice(nameStart, i).toLowerCase();
    const open = stack.pop();
    if (!open) throw new MarkupError(`Unexpected end tag at byte offset ${byteOffset(s, begin)}`);
    while (isSpace(s[i])) i++;
    if (s[i] !== '>') throw new MarkupError(`Unclosed end tag at byte offset ${byteOffset(s, begin)}`);
    i++;
    if (name && name !== open.tag) {
      throw new MarkupError(`Unmatched end tag at byte offset ${byteOffset(s, begin)}, expected "</${open.tag}>", found "</${name}>"`);
    }
    close(open, text.length, text, stack, entities);
  }
  const unclosed = stack[stack.length - 1];
  if (unclosed) throw new MarkupError(`Can't find end tag corresponding to start tag "${unclosed.tag}"`);
  return { text, entities: sortEntities(entities) };
}
