import { html, layout, type Raw } from './html.js';
import { signInWithList } from './federation.js';

/**
 * Well-known scopes in plain words for the consent page: what the app may do,
 * then what that means. Other scopes are shown by name. A Map, because scope
 * names come from requests: a scope called `constructor` must not find
 * Object.prototype's.
 */
const SCOPE_TEXT = new Map<string, { title: string; detail: string }>([
  ['user', { title: 'See your profile', detail: 'Your username, name and e-mail address.' }],
  ['profile', { title: 'See your name', detail: 'Your name and username.' }],
  ['email', { title: 'See your e-mail address', detail: 'The address on your account.' }],
  ['openid', { title: 'Confirm who you are', detail: 'Learn that it is you who signed in.' }],
  ['chat', { title: 'Read and send your chat messages', detail: 'It can read your conversations and write as you.' }],
  ['offline_access', { title: 'Keep access when you are away', detail: 'It stays connected after you leave the app.' }],
  ['groups', { title: 'See which groups you belong to', detail: 'The names of your groups in this organisation.' }],
  ['roles', { title: 'See your roles', detail: 'What you are allowed to do here, including roles colleagues approved for you for a while.' }],
]);

/** A scope in plain words, for short lists (the account page). */
export const scopeTitle = (scope: string): string => SCOPE_TEXT.get(scope)?.title ?? scope;

function scopeItem(scope: string): Raw {
  const known = SCOPE_TEXT.get(scope);
  if (known) return html`<li><span class="scope-title">${known.title}</span><span class="scope-detail">${known.detail}</span></li>`;
  return html`<li><span class="scope-title">Use the permission <code>${scope}</code></span><span class="scope-detail">A permission this server defines for its apps.</span></li>`;
}

/** Messages from the protocol layer are lower-case fragments; show them as sentences. */
function sentence(text: string): string {
  const t = text.trim();
  if (!t) return t;
  const s = t[0]!.toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

export function loginPage(opts: { csrf: string; returnTo: string; username?: string; error?: string; appName?: string; providers?: readonly { name: string; href: string }[] }): string {
  const described = opts.error ? html` aria-describedby="login-error"` : '';
  return layout('Sign in', html`
<h1>Sign in</h1>
${opts.appName
    ? html`<p class="lede">to continue to <strong class="app-name">${opts.appName}</strong></p>`
    : html`<p class="lede">with your Gatehouse account</p>`}
${opts.error ? html`<p class="error" id="login-error" role="alert">${opts.error}</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="csrf_token" value="${opts.csrf}">
  <input type="hidden" name="return_to" value="${opts.returnTo}">
  <div class="field">
    <label for="username">Username</label>
    <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${opts.username ?? ''}"${described} ${opts.username ? '' : 'autofocus'}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required${described} ${opts.username ? 'autofocus' : ''}>
  </div>
  <button class="primary" type="submit">Sign in</button>
</form>
<p class="links"><a href="/login/forgot">Forgot password?</a></p>${signInWithList(opts.providers ?? [])}`);
}

export interface ConsentView {
  clientName: string;
  username: string;
  /** The person's display name, when the account has one. */
  name?: string | null;
  scope: string[];
  /** Where the answer goes, as a person reads it (host, or the app's scheme). */
  returnsTo?: string;
  csrf: string;
  action: string;
  /** Hidden fields that carry the authorization request through the decision POST. */
  fields: Record<string, string | readonly string[] | undefined>;
  /** A device's user code, shown for the person to compare with their device (RFC 8628 §5.4). */
  deviceCode?: string;
}

export function consentPage(v: ConsentView): string {
  // A repeatable parameter (RFC 8707 `resource`) is one field per value.
  const hidden = Object.entries(v.fields)
    .flatMap(([k, val]) => (val === undefined ? [] : typeof val === 'string' ? [[k, val] as const] : val.map((one) => [k, one] as const)))
    .map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`);
  const scopes = v.scope.length
    ? v.scope.map(scopeItem)
    : [html`<li><span class="scope-title">Know that you signed in</span><span class="scope-detail">Nothing else from your account is shared.</span></li>`];
  const initial = (Array.from(v.clientName.trim())[0] ?? '?').toUpperCase();
  const who = v.name ? html`<strong>${v.name}</strong> <span class="muted">(${v.username})</span>` : html`<strong>${v.username}</strong>`;
  return layout(`Allow ${v.clientName}?`, html`
<div class="app-mark" aria-hidden="true">${initial}</div>
<h1 class="consent-title"><span class="app-name">${v.clientName}</span> wants to access your account</h1>
<p class="account">Signed in as ${who}</p>
${v.deviceCode ? html`<div class="device-code"><span class="muted">Code on your device</span><strong class="code">${v.deviceCode}</strong><span class="muted">Allow only if your device shows this code.</span></div>` : ''}
<h2 class="list-title">This will allow it to:</h2>
<ul class="scopes">${scopes}</ul>
<p class="note">Allow only if you trust <strong>${v.clientName}</strong>.${v.returnsTo ? html` Either way, you will go back to <strong class="host">${v.returnsTo}</strong>.` : ''}</p>
<form method="post" action="${v.action}">
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  ${hidden}
  <div class="actions">
    <button type="submit" name="approve" value="false">Deny</button>
    <button class="primary" type="submit" name="approve" value="true">Allow</button>
  </div>
</form>`);
}

export function errorPage(title: string, message: string): string {
  return layout(title, html`<div class="error-mark" aria-hidden="true">!</div>
<h1>${title}</h1>
<p class="error" role="alert">${sentence(message)}</p>
<p class="muted">If an application sent you here, go back to it and try again. If this keeps happening, let the application's developers know.</p>`);
}

