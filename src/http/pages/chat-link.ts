import type { LinkTarget } from '../../core/notify/link-target.js';
import { html, layout, type Raw } from './html.js';

/** Linking a chat from /account/security (issue 24, finding 7): a one-time code the chat sends as `/start <code>`. */
export const CHAT_LINK_PATH = '/account/security/chat-link';

/** What a linked chat can do: said wherever a chat is about to be linked. */
export const CHAT_POWERS = html`<ul class="powers" id="chat-powers">
  <li>approve or refuse sign-ins to your account (the number to tap),</li>
  <li>approve devices and applications' requests to act for you,</li>
  <li>end your sessions and lock your account,</li>
  <li>and it gets your security notifications.</li>
</ul>`;

/** The section of /account/security that starts a link. */
export function chatLinkSection(csrf: string): Raw {
  return html`<h2 class="list-title" id="chat-link">Link a chat</h2>
<p class="muted">A linked chat with the notification bot can approve sign-ins, devices and applications' requests for you, and lock your account. Link only your own chat.</p>
<form method="post" action="${CHAT_LINK_PATH}"><input type="hidden" name="csrf_token" value="${csrf}">
  <button class="small" type="submit">Link a chat</button>
</form>`;
}

/** The code, shown once, and the link that opens the bot's chat with `/start <code>` ready to send. */
export function chatLinkCodePage(v: { username: string; code: string; minutes: number; url: string | undefined; bot: string | undefined }): string {
  const bot = v.bot ? html`<strong>@${v.bot}</strong>` : html`the notification bot`;
  return layout('Link a chat', html`<h1>Link a chat</h1>
<p class="lede">Signed in as <strong>${v.username}</strong>.</p>
<p>Send this to ${bot} from your own chat within ${v.minutes} minutes. It works once.</p>
<p><code id="link-start">/start ${v.code}</code></p>
<p class="muted">Code: <code id="link-code">${v.code}</code></p>
${v.url ? html`<p><a class="button primary" id="link-chat" href="${v.url}" rel="noopener">Open the chat</a></p>` : ''}
<p>That chat will be able to:</p>
${CHAT_POWERS}
<p class="muted">Never send this code to anyone else's chat, and never give it to anyone: whoever sends it gets these powers over your account.</p>
<p class="links"><a href="/account/security">Done</a></p>`);
}

const who = (t: LinkTarget): Raw => {
  const name = t.chat.name;
  const user = t.chat.username;
  if (name && user) return html`<strong id="link-chat-name">${name} (@${user})</strong>`;
  if (name || user) return html`<strong id="link-chat-name">${name ?? `@${user}`}</strong>`;
  return html`<strong id="link-chat-name">chat ${t.chat.id}</strong>`;
};
const bot = (t: LinkTarget): Raw => (t.bot.username
  ? html`<strong id="link-bot">${t.bot.name ? `${t.bot.name} (@${t.bot.username})` : `@${t.bot.username}`}</strong>`
  : html`<strong id="link-bot">the notification bot</strong>`);

/** The older order's confirmation (`/start` first): names the chat and what it will be able to do. */
export function linkConfirmPage(v: { username: string; target: LinkTarget; action: string; csrf: string; token: string }): string {
  return layout('Link a chat', html`<h1>Link this chat to your account?</h1>
<p class="lede">Signed in as <strong>${v.username}</strong>.</p>
<p>The chat of ${who(v.target)} with ${bot(v.target)} asked to be linked to your account. Once linked, it can:</p>
${CHAT_POWERS}
<p class="warning"><strong>Link it only if it is your own chat.</strong> If someone sent you this link, do not press the button: they would control your sign-ins.</p>
<form method="post" action="${v.action}">
<input type="hidden" name="csrf_token" value="${v.csrf}">
<input type="hidden" name="token" value="${v.token}">
<button type="submit" class="primary">Link the chat of ${v.target.chat.username ? `@${v.target.chat.username}` : v.target.chat.name ?? 'this chat'}</button>
</form>
<p class="links"><a href="/account/security">Cancel</a></p>`);
}

/** On Gatehouse's own chat service: the chat is another person's, so this person may not link it. */
export const NOT_YOURS = {
  title: 'Not your chat',
  text: (t?: LinkTarget) => `This link was made in the chat of ${t?.chat.username ? `@${t.chat.username}` : 'another person'}, not in yours, so it cannot be linked to your account. If someone sent you this link, ignore it. To link your own chat, open /account/security and choose "Link a chat".`,
};
