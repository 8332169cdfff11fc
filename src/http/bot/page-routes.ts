import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Gatehouse } from '../../gatehouse.js';
import { documentHead, esc, LOGO } from '../pages/html.js';
import { CHAT_PAGE_CLIENT_ID, chatRedirectUri } from '../../core/bot/chat-page-client.js';

const asset = (name: string) => readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8');

/**
 * Only our own script, styles and API: no inline script (the page's
 * settings travel in data- attributes), no framing, no referrer (the
 * callback URL carries the code until the script removes it).
 */
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data: blob:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function page(gh: Gatehouse, botUrl: string): string {
  const authorize = `${gh.config.authUrl}/oauth2`;
  return `${documentHead('Gatehouse Chat', { stylesheets: ['/assets/chat.css'], scripts: ['/assets/chat-media.js', '/assets/chat-text.js', '/assets/chat.js'], colorScheme: false })}<body data-authorize="${esc(authorize)}" data-issuer="${esc(gh.oauth.issuer)}" data-client-id="${CHAT_PAGE_CLIENT_ID}" data-redirect-uri="${esc(chatRedirectUri(botUrl))}">
<header class="bar"><strong class="brand">${LOGO.html}Gatehouse Chat</strong><span id="me" class="muted"></span><button id="signout" type="button" hidden>Sign out</button></header>
<p id="error" class="error" role="alert" hidden></p>
<section id="welcome" class="welcome" hidden>
  <h1>Talk to your bots</h1>
  <p class="muted">Sign in with your Gatehouse account to chat with BotFather and with bots.</p>
  <button id="signin" class="primary" type="button">Sign in</button>
</section>
<main id="app" class="app" hidden>
  <nav class="chats" aria-label="Chats">
    <ul id="chats"></ul>
    <form id="new-chat" autocomplete="off">
      <label for="new-chat-name">Open a chat with a bot</label>
      <input id="new-chat-name" name="bot" type="text" placeholder="@username_bot" required spellcheck="false" autocapitalize="none">
      <button type="submit">Open</button>
    </form>
  </nav>
  <section class="conversation" aria-live="polite">
    <h2 id="title">Choose a chat</h2>
    <p id="hint" class="hint" hidden>This chat is empty. Send <button id="hint-start" class="link" type="button">/start</button> to see what BotFather can do, such as <code>/newbot</code> to create a bot.</p>
    <ol id="messages"></ol>
    <div id="toast" class="toast" role="status" hidden></div>
    <ul id="command-list" class="command-list" aria-label="Commands" hidden></ul>
    <div id="reply-keyboard" class="reply-keyboard" aria-label="Keyboard" hidden></div>
    <form id="compose" autocomplete="off" hidden>
      <label for="text" class="visually-hidden">Message</label>
      <textarea id="text" name="text" rows="1" placeholder="Write a message…" title="Enter sends, Shift+Enter starts a new line" maxlength="4096" required></textarea>
      <button class="primary" type="submit">Send</button>
    </form>
  </section>
</main>
<dialog id="alert" class="alert"><p id="alert-text"></p><button id="alert-ok" class="primary" type="button">OK</button></dialog>
<noscript><p class="error">The chat needs JavaScript.</p></noscript>
</body>
</html>`;
}

/** The chat web page at {bot_api_url}/ (its token exchange is in client-routes.ts). */
export async function pageRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const js = asset('chat.js');
  const mediaJs = asset('chat-media.js');
  const textJs = asset('chat-text.js');
  const css = asset('chat.css');
  const html = async (_req: unknown, reply: FastifyReply) => reply
    .header('content-type', 'text/html; charset=utf-8').header('content-security-policy', CSP).header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer').header('x-content-type-options', 'nosniff').header('cache-control', 'no-store')
    .send(page(gh, gh.config.botApiUrl));
  app.get('/', html);
  app.get('/callback', html);
  app.get('/favicon.ico', async (_req, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());
  app.get('/assets/chat.js', async (_req, reply) => reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(js));
  app.get('/assets/chat-media.js', async (_req, reply) => reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(mediaJs));
  app.get('/assets/chat-text.js', async (_req, reply) => reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(textJs));
  app.get('/assets/chat.css', async (_req, reply) => reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'no-cache').send(css));

}
