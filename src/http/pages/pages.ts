import { html, layout } from './html.js';

/** Human descriptions of well-known scopes on the consent page. */
const SCOPE_TEXT: Record<string, string> = {
  user: 'Your profile: username, name and e-mail address',
  profile: 'Your name and username',
  email: 'Your e-mail address',
  openid: 'Confirm who you are',
  chat: 'Read and send your chat messages',
  offline_access: 'Stay connected when you are not using it',
};

export function loginPage(opts: { csrf: string; returnTo: string; username?: string; error?: string }): string {
  return layout('Sign in', html`
<h1>Sign in</h1>
<p class="muted">Sign in to continue.</p>
${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="csrf_token" value="${opts.csrf}">
  <input type="hidden" name="return_to" value="${opts.returnTo}">
  <label for="username">Username</label>
  <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${opts.username ?? ''}" ${opts.username ? '' : 'autofocus'}>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required ${opts.username ? 'autofocus' : ''}>
  <button class="primary" type="submit">Sign in</button>
</form>`);
}

export interface ConsentView {
  clientName: string;
  username: string;
  scope: string[];
  csrf: string;
  action: string;
  /** Hidden fields that carry the authorization request through the decision POST. */
  fields: Record<string, string | undefined>;
}

export function consentPage(v: ConsentView): string {
  const hidden = Object.entries(v.fields)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`);
  const scopes = v.scope.length
    ? v.scope.map((s) => html`<li>${SCOPE_TEXT[s] ?? 'Access'} <code>${s}</code></li>`)
    : [html`<li>Basic access, no extra permissions</li>`];
  return layout('Authorize', html`
<h1>Allow ${v.clientName}?</h1>
<p class="muted">Signed in as <strong>${v.username}</strong>.</p>
<p><strong>${v.clientName}</strong> asks to:</p>
<ul class="scopes">${scopes}</ul>
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
  return layout(title, html`<h1>${title}</h1><p class="error" role="alert">${message}</p>
<p class="muted">If you followed a link from an application, tell its developers; you can close this page.</p>`);
}

export function homePage(opts: { username?: string; csrf?: string }): string {
  if (!opts.username) return layout('Gatehouse', html`<h1>Gatehouse</h1><p>You are not signed in.</p><p><a href="/login">Sign in</a></p>`);
  return layout('Gatehouse', html`<h1>Signed in</h1><p>You are signed in as <strong>${opts.username}</strong>.</p>
<form method="post" action="/logout"><input type="hidden" name="csrf_token" value="${opts.csrf}"><button type="submit">Sign out</button></form>`);
}
