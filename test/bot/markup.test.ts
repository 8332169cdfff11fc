import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseHtml } from '../../src/core/bot/markup/html.js';
import { parseMarkdown } from '../../src/core/bot/markup/markdown.js';
import { parseMarkdownV2 } from '../../src/core/bot/markup/markdown-v2.js';
import { MarkupError } from '../../src/core/bot/markup/text.js';

type Parser = (s: string) => { text: string; entities: unknown[] };
const e = (type: string, offset: number, length: number, extra: Record<string, string> = {}) => ({ type, offset, length, ...extra });

function ok(parse: Parser, input: string, text: string, entities: unknown[]) {
  assert.deepEqual(parse(input), { text, entities }, input);
}
function fails(parse: Parser, input: string, message: string) {
  assert.throws(() => parse(input), (err: unknown) => err instanceof MarkupError && err.message === message, input);
}

// Expected results follow the official server (tdlib's MessageEntity tests); offsets are UTF-16, error positions UTF-8 bytes.
describe('parse_mode HTML', () => {
  it('parses tags, entities and links', () => {
    ok(parseHtml, '', '', []);
    ok(parseHtml, '&lt;&gt;&amp;&quot;&laquo;&#12345678;', '<>&"&laquo;&#12345678;', []);
    // Names are looked up among the four served only, never on an object's prototype.
    ok(parseHtml, '&constructor; &toString &valueOf; &hasOwnProperty;', '&constructor; &toString &valueOf; &hasOwnProperty;', []);
    ok(parseHtml, '➡️ ➡️<i>➡️ ➡️</i>', '➡️ ➡️➡️ ➡️', [e('italic', 5, 5)]);
    ok(parseHtml, '<b>a</b><strong>b</strong><u>c</u><ins>d</ins><s>e</s><strike>f</strike><del>g</del><em>h</em>', 'abcdefgh',
      [e('bold', 0, 1), e('bold', 1, 1), e('underline', 2, 1), e('underline', 3, 1), e('strikethrough', 4, 1), e('strikethrough', 5, 1), e('strikethrough', 6, 1), e('italic', 7, 1)]);
    ok(parseHtml, '🏟 🏟<i>🏟 &gt;<b aba   =   caba>&lt🏟</b></i>', '🏟 🏟🏟 ><🏟', [e('italic', 5, 7), e('bold', 9, 3)]);
    ok(parseHtml, '🏟 🏟&lt;<i>a</    >', '🏟 🏟<a', [e('italic', 6, 1)]);
    ok(parseHtml, '<a href=telegram.org> </a>', ' ', [e('text_link', 0, 1, { url: 'http://telegram.org/' })]);
    ok(parseHtml, "<a   href=  'telegram.org?&lt;'   >x</a>", 'x', [e('text_link', 0, 1, { url: 'http://telegram.org/?%3C' })]);
    ok(parseHtml, '<a>telegram.org</a>', 'telegram.org', [e('text_link', 0, 12, { url: 'http://telegram.org/' })]);
    ok(parseHtml, '<a> </a>', ' ', []);
    ok(parseHtml, '<pre><code class="language-python">x = 1</code></pre>', 'x = 1', [e('pre', 0, 5, { language: 'python' })]);
    ok(parseHtml, '<code>c</code><tg-spoiler>s</tg-spoiler><span class="tg-spoiler">p</span>', 'csp', [e('code', 0, 1), e('spoiler', 1, 1), e('spoiler', 2, 1)]);
    ok(parseHtml, '<blockquote expandable>q</blockquote><blockquote>r</blockquote>', 'qr', [e('expandable_blockquote', 0, 1), e('blockquote', 1, 1)]);
    ok(parseHtml, '<b></b>x', 'x', []);
  });

  it('refuses invalid markup as the official server does', () => {
    fails(parseHtml, '🏟 🏟&lt;<abacaba', 'Unclosed start tag at byte offset 13');
    fails(parseHtml, '🏟 🏟&lt;<abac aba>', 'Unsupported start tag "abac" at byte offset 13');
    fails(parseHtml, '🏟 🏟&lt;<i   =aba>', 'Empty attribute name in the tag "i" at byte offset 13');
    fails(parseHtml, '🏟 🏟&lt;<i    aba>', 'Expected equal sign in declaration of an attribute of the tag "i" at byte offset 13');
    fails(parseHtml, '🏟 🏟&lt;<i    aba  =  ', 'Unclosed start tag "i" at byte offset 13');
    fails(parseHtml, '🏟 🏟&lt;<i    aba  =  190azAz-.,', 'Unexpected end of name token at byte offset 27');
    fails(parseHtml, '🏟 🏟&lt;<i    aba  =  "&lt;&gt;&quot;>', 'Unclosed start tag at byte offset 13');
    fails(parseHtml, '🏟 🏟&lt;</', 'Unexpected end tag at byte offset 13');
    fails(parseHtml, '🏟 🏟&lt;<b></b></', 'Unexpected end tag at byte offset 20');
    fails(parseHtml, '🏟 🏟&lt;<i>a</i   ', 'Unclosed end tag at byte offset 17');
    fails(parseHtml, '🏟 🏟&lt;<i>a</em   >', 'Unmatched end tag at byte offset 17, expected "</i>", found "</em>"');
    fails(parseHtml, '<b>x', 'Can\'t find end tag corresponding to start tag "b"');
    fails(parseHtml, '<span>x</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0');
    fails(parseHtml, 'a < b', 'Unsupported start tag "" at byte offset 2');
    fails(parseHtml, '&#xDFDF;', 'Text contains invalid Unicode characters after decoding HTML entities, check for unmatched surrogate code units');
  });
});

describe('parse_mode MarkdownV2', () => {
  it('parses entities with UTF-16 offsets', () => {
    ok(parseMarkdownV2, '', '', []);
    ok(parseMarkdownV2, '\\\\', '\\', []);
    ok(parseMarkdownV2, '🏟 🏟_abac \\* asd _', '🏟 🏟abac * asd ', [e('italic', 5, 11)]);
    ok(parseMarkdownV2, '➡️ ➡️_➡️ ➡️_*➡️ ➡️*', '➡️ ➡️➡️ ➡️➡️ ➡️', [e('italic', 5, 5), e('bold', 10, 5)]);
    ok(parseMarkdownV2, '🏟 🏟_🏟 *🏟*_', '🏟 🏟🏟 🏟', [e('italic', 5, 5), e('bold', 8, 2)]);
    ok(parseMarkdownV2, '🏟 🏟_🏟 __🏟___', '🏟 🏟🏟 🏟', [e('italic', 5, 5), e('underline', 8, 2)]);
    ok(parseMarkdownV2, '🏟 🏟__🏟 _🏟_ __', '🏟 🏟🏟 🏟 ', [e('underline', 5, 6), e('italic', 8, 2)]);
    ok(parseMarkdownV2, '🏟 🏟`🏟 🏟```', '🏟 🏟🏟 🏟', [e('code', 5, 5)]);
    ok(parseMarkdownV2, '🏟 🏟```🏟 🏟```', '🏟 🏟 🏟', [e('pre', 5, 3, { language: '🏟' })]);
    ok(parseMarkdownV2, '||test||', 'test', [e('spoiler', 0, 4)]);
    ok(parseMarkdownV2, '~s~', 's', [e('strikethrough', 0, 1)]);
    ok(parseMarkdownV2, '[telegram\\.org](telegram.dog)', 'telegram.org', [e('text_link', 0, 12, { url: 'http://telegram.dog/' })]);
    ok(parseMarkdownV2, '[telegram\\.org]', 'telegram.org', [e('text_link', 0, 12, { url: 'http://telegram.org/' })]);
    ok(parseMarkdownV2, '[ ](as)', ' ', []);
    ok(parseMarkdownV2, '>quoted\nplain', 'quoted\nplain', [e('blockquote', 0, 7)]);
  });

  it('refuses invalid markup as the official server does', () => {
    for (const c of ']()>#+-=|{}.!') fails(parseMarkdownV2, `x${c}`, `Character '${c}' is reserved and must be escaped with the preceding '\\'`);
    fails(parseMarkdownV2, '🏟 🏟_abacaba', "Can't find end of Italic entity at byte offset 9");
    fails(parseMarkdownV2, '🏟 🏟_abac * asd ', "Can't find end of Bold entity at byte offset 15");
    fails(parseMarkdownV2, '🏟 🏟`', "Can't find end of Code entity at byte offset 9");
    fails(parseMarkdownV2, '🏟 🏟```', "Can't find end of Pre entity at byte offset 9");
    fails(parseMarkdownV2, '🏟 🏟```a ', "Can't find end of PreCode entity at byte offset 9");
    fails(parseMarkdownV2, '🏟 🏟__', "Can't find end of Underline entity at byte offset 9");
    fails(parseMarkdownV2, '🏟 🏟||test\\|', "Can't find end of Spoiler entity at byte offset 9");
    fails(parseMarkdownV2, '[telegram\\.org](asd', "Can't find end of a URL at byte offset 16");
  });
});

describe('parse_mode Markdown (legacy)', () => {
  it('parses and refuses', () => {
    ok(parseMarkdown, '*bold* _it_ `code` [link](http://example.com/x)', 'bold it code link',
      [e('bold', 0, 4), e('italic', 5, 2), e('code', 8, 4), e('text_link', 13, 4, { url: 'http://example.com/x' })]);
    ok(parseMarkdown, '```js\nlet a;```', 'let a;', [e('pre', 0, 6, { language: 'js' })]);
    ok(parseMarkdown, '\\*not bold\\*', '*not bold*', []);
    fails(parseMarkdown, '🏟 *x', "Can't find end of the entity starting at byte offset 5");
  });
});
