// Gatehouse Chat: signs in through the authorization server (authorization
// code + PKCE, RFC 7636; iss checked, RFC 9207), then talks to bots through
// the chat client API, long-polling for new messages. No inline script: the
// page's settings come from data- attributes on <body>.
'use strict';
(() => {
  const cfg = document.body.dataset;
  const $ = (id) => document.getElementById(id);
  const store = window.sessionStorage;
  const TOKEN = 'gh_chat_token';
  const PKCE = 'gh_chat_pkce';
  const START = 'gh_chat_start';
  let token = store.getItem(TOKEN);
  let active = null;
  let lastId = 0;
  let poller = null;

  const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  function showError(text) {
    const el = $('error');
    el.textContent = text || '';
    el.hidden = !text;
  }

  function signedOut() {
    token = null;
    store.removeItem(TOKEN);
    if (poller) poller.abort();
    $('app').hidden = true;
    $('signout').hidden = true;
    $('me').textContent = '';
    $('welcome').hidden = false;
  }

  async function signIn() {
    const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
    const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
    const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
    store.setItem(PKCE, JSON.stringify({ verifier, state }));
    const url = new URL(cfg.authorize);
    url.search = new URLSearchParams({
      response_type: 'code', client_id: cfg.clientId, redirect_uri: cfg.redirectUri, scope: 'chat', state,
      code_challenge: b64url(new Uint8Array(digest)), code_challenge_method: 'S256',
    }).toString();
    window.location.assign(url.toString());
  }

  async function finishSignIn() {
    const q = new URLSearchParams(window.location.search);
    if (!q.has('code') && !q.has('error')) return;
    const saved = JSON.parse(store.getItem(PKCE) || 'null');
    store.removeItem(PKCE);
    window.history.replaceState(null, '', '/');
    if (q.has('error')) return showError(`Sign-in failed: ${q.get('error_description') || q.get('error')}`);
    if (!saved || saved.state !== q.get('state')) return showError('Sign-in failed: the answer does not match this page\'s request.');
    if (q.has('iss') && q.get('iss') !== cfg.issuer) return showError('Sign-in failed: unexpected issuer.');
    const res = await fetch('/client/token', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', code: q.get('code'), code_verifier: saved.verifier, redirect_uri: cfg.redirectUri }),
    });
    const body = await res.json();
    if (!res.ok) return showError(`Sign-in failed: ${body.error_description || body.error}`);
    token = body.access_token;
    store.setItem(TOKEN, token);
  }

  async function api(path, init = {}) {
    const res = await fetch(path, { ...init, headers: { ...(init.headers || {}), authorization: `Bearer ${token}` } });
    if (res.status === 401) {
      signedOut();
      throw new Error('signed out');
    }
    const body = await res.json();
    if (!res.ok) throw new Error(body.error_description || body.error || `HTTP ${res.status}`);
    return body;
  }

  /** Only links a browser should open from a button: http(s) (tg: links have no meaning here). */
  const safeUrl = (url) => (typeof url === 'string' && /^https?:\/\//i.test(url) ? url : null);

  let toastTimer = null;
  function toast(text) {
    const el = $('toast');
    el.textContent = text;
    el.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
  }

  function alertBox(text) {
    $('alert-text').textContent = text;
    $('alert').showModal();
  }

  /** A press: the bot's answer is a toast, an alert (show_alert) or a link to open. */
  async function press(messageId, data, button) {
    button.disabled = true;
    try {
      const body = await api(`/client/chats/${encodeURIComponent(active)}/callback`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_id: messageId, data }),
      });
      const r = body.result || {};
      if (r.text) (r.show_alert ? alertBox : toast)(r.text);
      const url = safeUrl(r.url);
      if (url) window.open(url, '_blank', 'noopener');
    } catch (e) {
      showError(e.message);
    } finally {
      button.disabled = false;
    }
  }

  function inlineKeyboard(m) {
    const rows = m.reply_markup && m.reply_markup.inline_keyboard;
    if (!Array.isArray(rows)) return null;
    const box = document.createElement('div');
    box.className = 'inline-keyboard';
    for (const row of rows) {
      const line = document.createElement('div');
      line.className = 'kb-row';
      for (const b of row) {
        let el;
        if (b.url !== undefined) {
          el = document.createElement('a');
          const url = safeUrl(b.url);
          if (url) el.href = url;
          el.target = '_blank';
          el.rel = 'noopener noreferrer';
        } else {
          el = document.createElement('button');
          el.type = 'button';
          if (b.callback_data !== undefined) el.addEventListener('click', () => press(m.message_id, b.callback_data, el));
          else el.disabled = true;
        }
        el.className = 'kb-button';
        el.textContent = b.text;
        line.append(el);
      }
      box.append(line);
    }
    return box;
  }

  /** The reply keyboard above the input follows the bot's latest keyboard or removal. */
  function replyKeyboard(m) {
    const markup = m.reply_markup;
    if (!markup || !(m.from && m.from.is_bot)) return;
    const box = $('reply-keyboard');
    if (markup.remove_keyboard) {
      box.replaceChildren();
      box.hidden = true;
      return;
    }
    if (!Array.isArray(markup.keyboard)) return;
    box.replaceChildren();
    box.classList.toggle('resize', Boolean(markup.resize_keyboard));
    for (const row of markup.keyboard) {
      const line = document.createElement('div');
      line.className = 'kb-row';
      for (const key of row) {
        const text = typeof key === 'string' ? key : key.text;
        const el = document.createElement('button');
        el.type = 'button';
        el.className = 'kb-button';
        el.textContent = text;
        el.addEventListener('click', () => {
          if (markup.one_time_keyboard) box.hidden = true;
          sendText(text);
        });
        line.append(el);
      }
      box.append(line);
    }
    box.hidden = false;
  }

  function messageItem(m) {
    const li = document.createElement('li');
    li.className = `msg ${m.from && m.from.is_bot ? 'theirs' : 'mine'}`;
    li.dataset.id = String(m.message_id);
    const body = document.createElement('div');
    body.className = 'text';
    window.ghChatText.render(body, m.text || m.caption || '', m.entities || m.caption_entities);
    const media = window.ghChatMedia.element(m, token, (e) => showError(e.message));
    if (media) li.append(media);
    const time = document.createElement('time');
    time.textContent = new Date(m.date * 1000).toLocaleTimeString() + (m.edit_date ? ' · edited' : '');
    li.append(body);
    li.append(...window.ghChatText.tokenButtons(m, toast));
    const kb = inlineKeyboard(m);
    if (kb) li.append(kb);
    li.append(time);
    return li;
  }

  /** A new message, or one the long poll reports edited (the same message_id) or deleted. */
  function appendMessage(m) {
    const existing = document.querySelector(`#messages [data-id="${m.message_id}"]`);
    if (m.deleted) {
      if (existing) existing.remove();
      return;
    }
    if (existing) {
      existing.replaceWith(messageItem(m));
      return;
    }
    const li = messageItem(m);
    $('messages').append(li);
    $('hint').hidden = true;
    replyKeyboard(m);
    li.scrollIntoView({ block: 'end' });
    lastId = Math.max(lastId, m.message_id);
  }

  // The bot's commands, offered when the person starts a message with a slash.
  const commandCache = new Map();
  async function offerCommands() {
    const list = $('command-list');
    const value = $('text').value;
    const bot = active;
    if (!bot || !/^\/\w*$/.test(value)) {
      list.hidden = true;
      return;
    }
    if (!commandCache.has(bot)) commandCache.set(bot, api(`/client/chats/${encodeURIComponent(bot)}/commands`).then((b) => b.commands, () => []));
    const commands = (await commandCache.get(bot)).filter((c) => `/${c.command}`.startsWith(value.toLowerCase()));
    if (bot !== active || $('text').value !== value) return;
    list.replaceChildren();
    for (const c of commands) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.command = c.command;
      const name = document.createElement('strong');
      name.textContent = `/${c.command}`;
      const desc = document.createElement('span');
      desc.textContent = c.description;
      b.append(name, desc);
      b.addEventListener('click', () => {
        list.hidden = true;
        $('text').value = '';
        sendText(`/${c.command}`);
      });
      li.append(b);
      list.append(li);
    }
    list.hidden = commands.length === 0;
  }

  async function loadChats() {
    const { chats } = await api('/client/chats');
    const ul = $('chats');
    ul.replaceChildren();
    for (const c of chats) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.bot = c.bot.username;
      b.textContent = c.bot.first_name;
      if (active && active.toLowerCase() === c.bot.username.toLowerCase()) b.setAttribute('aria-current', 'true');
      const small = document.createElement('small');
      const last = c.last_message;
      small.textContent = last ? last.text || last.caption || (last.photo ? 'Photo' : last.document ? 'Document' : '') : `@${c.bot.username}`;
      b.append(small);
      b.addEventListener('click', () => openChat(c.bot.username));
      li.append(b);
      ul.append(li);
    }
  }

  async function poll(bot, signal) {
    // The first read answers at once, so an empty chat is known as empty.
    let first = true;
    while (!signal.aborted && active === bot) {
      try {
        const { messages } = await api(`/client/chats/${encodeURIComponent(bot)}/messages?after=${lastId}${first ? '' : '&timeout=25'}`, { signal });
        if (active !== bot) return;
        // An empty chat with BotFather says how to begin; the first message hides it.
        if (first && !messages.length && lastId === 0 && bot.toLowerCase() === 'botfather') $('hint').hidden = false;
        first = false;
        messages.forEach(appendMessage);
        if (messages.length) loadChats().catch(() => {});
      } catch (e) {
        if (signal.aborted || !token) return;
        showError(e.message);
        await sleep(2000);
      }
    }
  }

  function openChat(bot) {
    showError('');
    if (poller) poller.abort();
    active = bot;
    lastId = 0;
    $('title').textContent = bot === 'BotFather' ? 'BotFather' : `@${bot}`;
    $('messages').replaceChildren();
    $('hint').hidden = true;
    $('reply-keyboard').replaceChildren();
    $('reply-keyboard').hidden = true;
    $('command-list').hidden = true;
    commandCache.delete(bot);
    $('compose').hidden = false;
    // aria-current="true", as the chat list draws it and the style selects it (toggleAttribute would leave it empty).
    for (const b of document.querySelectorAll('#chats button')) {
      if (b.dataset.bot === bot) b.setAttribute('aria-current', 'true');
      else b.removeAttribute('aria-current');
    }
    poller = new AbortController();
    poll(bot, poller.signal);
    $('text').focus();
  }

  async function send(event) {
    event.preventDefault();
    const input = $('text');
    const text = input.value;
    if (!active || !text.trim()) return;
    input.value = '';
    $('command-list').hidden = true;
    if (!(await sendText(text))) input.value = text;
  }

  async function sendText(text) {
    try {
      const { message } = await api(`/client/chats/${encodeURIComponent(active)}/messages`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }),
      });
      appendMessage(message);
      loadChats().catch(() => {});
      return true;
    } catch (e) {
      showError(e.message);
      return false;
    }
  }

  /**
   * `#chat=<bot>&start=<code>` (the link /account/security shows): kept across
   * the sign-in redirect, then that chat opens with `/start <code>` typed in.
   */
  function keepStart() {
    const h = new URLSearchParams(window.location.hash.slice(1));
    const bot = h.get('chat');
    const code = h.get('start');
    if (!bot || !code || !/^[A-Za-z0-9_]{1,64}$/.test(bot) || !/^[A-Za-z0-9_-]{1,64}$/.test(code)) return;
    store.setItem(START, JSON.stringify({ bot, start: code }));
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }

  async function start() {
    $('signin').addEventListener('click', () => signIn().catch((e) => showError(e.message)));
    $('signout').addEventListener('click', signedOut);
    $('compose').addEventListener('submit', send);
    // Enter sends, Shift+Enter starts a new line (a command list for BotFather has several).
    $('text').addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        $('compose').requestSubmit();
      }
    });
    $('text').addEventListener('input', () => offerCommands().catch(() => {}));
    $('alert-ok').addEventListener('click', () => $('alert').close());
    $('hint-start').addEventListener('click', () => sendText('/start'));
    $('new-chat').addEventListener('submit', (event) => {
      event.preventDefault();
      const name = $('new-chat-name').value.trim().replace(/^@/, '');
      if (name) openChat(name);
      $('new-chat-name').value = '';
    });
    keepStart();
    await finishSignIn();
    if (!token) return signedOut();
    $('welcome').hidden = true;
    $('app').hidden = false;
    $('signout').hidden = false;
    try {
      await loadChats();
      const pending = JSON.parse(store.getItem(START) || 'null');
      store.removeItem(START);
      openChat(pending ? pending.bot : 'BotFather');
      // Like Telegram's start links: the message is ready, the person sends it.
      if (pending) $('text').value = `/start ${pending.start}`;
    } catch (e) {
      if (token) showError(e.message);
    }
  }

  start().catch((e) => showError(e.message));
})();
