// Gatehouse Chat: a message's text as DOM nodes, never parsed as HTML: its
// entities as elements, http(s) addresses as links that open in a new tab,
// and a copy button beside each bot token in BotFather's messages. Loaded
// before chat.js, which calls ghChatText.
'use strict';
window.ghChatText = (() => {
  const TAGS = { bold: 'strong', italic: 'em', underline: 'u', strikethrough: 's', code: 'code', pre: 'pre', spoiler: 'span', blockquote: 'blockquote', expandable_blockquote: 'blockquote' };

  /** A link that opens in a new tab without handing the page to it. */
  function link(href, text) {
    const a = document.createElement('a');
    a.href = href;
    a.rel = 'noopener noreferrer';
    a.target = '_blank';
    a.textContent = text;
    return a;
  }

  // The server's url entities use the same pattern (src/core/bot/detect.ts).
  const LINK = /\bhttps?:\/\/[^\s<>"]+[^\s<>".,;:!?)'\]]/giu;

  /** Text outside entities, its http(s) addresses as links: built as nodes, never parsed as HTML. */
  function appendPlain(el, text) {
    let at = 0;
    for (const m of text.matchAll(LINK)) {
      el.append(text.slice(at, m.index), link(m[0], m[0]));
      at = m.index + m[0].length;
    }
    el.append(text.slice(at));
  }

  /** Text with its (outermost) entities as elements; never parsed as HTML. */
  function render(el, text, entities) {
    let at = 0;
    const list = (entities || []).slice().sort((a, b) => a.offset - b.offset || b.length - a.length);
    for (const e of list) {
      if (e.offset < at) continue;
      appendPlain(el, text.slice(at, e.offset));
      const part = text.slice(e.offset, e.offset + e.length);
      let node;
      if (e.type === 'text_link' || e.type === 'url') {
        const href = e.type === 'url' ? part : e.url;
        if (!/^https?:/i.test(href)) { el.append(part); at = e.offset + e.length; continue; }
        node = link(href, '');
      } else if (TAGS[e.type]) {
        node = document.createElement(TAGS[e.type]);
        if (e.type === 'spoiler') node.className = 'spoiler';
      } else {
        node = document.createElement('span');
      }
      node.textContent = part;
      el.append(node);
      at = e.offset + e.length;
    }
    appendPlain(el, text.slice(at));
  }

  // A bot token as BotFather writes it (<id>:<35 characters>).
  const BOT_TOKEN = /(?<![0-9])\d+:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g;

  /** Puts text on the clipboard; without the Clipboard API (plain http off localhost), a selected text area and execCommand. */
  async function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        return true;
      } catch {
        // Permission refused: fall through to the older way.
      }
    }
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'visually-hidden';
    document.body.append(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }

  function copyButton(value, toast) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'copy';
    b.dataset.copy = value;
    b.textContent = 'Copy token';
    b.addEventListener('click', async () => {
      const ok = await copyText(value);
      b.textContent = ok ? 'Copied' : 'Copy failed: select the token';
      toast(ok ? 'Token copied to the clipboard.' : 'Copying is not allowed here; select the token and copy it.');
      setTimeout(() => { b.textContent = 'Copy token'; }, 3000);
    });
    return b;
  }

  /** Copy buttons for the bot tokens in one of BotFather's messages; none for anyone else's. */
  function tokenButtons(m, toast) {
    if (!(m.from && m.from.is_bot && m.from.username === 'BotFather')) return [];
    return ((m.text || '').match(BOT_TOKEN) || []).map((t) => copyButton(t, toast));
  }

  return { render, tokenButtons };
})();
