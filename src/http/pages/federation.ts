import { html, layout } from './html.js';

/** "Sign in with …" links under the login form; links, not buttons, so the form's own submit button stays the only one. */
export function signInWithList(providers: readonly { name: string; href: string }[]) {
  if (!providers.length) return html``;
  return html`
<div class="federation">
  <p class="muted or">or</p>
  ${providers.map((p) => html`<a class="button" href="${p.href}">Sign in with ${p.name}</a>`)}
</div>`;
}

export interface FirstSignInView {
  providerName: string;
  /** How the provider names the person, for "Signed in at X as …". */
  who: string;
  suggestion: string;
  csrf: string;
  error?: string;
  /** Which form the error belongs to, so its fields get focus and description. */
  errorIn?: 'create' | 'link';
  linkUsername?: string;
}

/**
 * A person's first sign-in through a provider: a new account here (one
 * click, username suggested), or an account they already have, which they
 * must sign in to with its password before it is linked.
 */
export function firstSignInPage(v: FirstSignInView): string {
  const err = (form: 'create' | 'link') => (v.error && v.errorIn === form ? html`<p class="error" id="${form}-error" role="alert">${v.error}</p>` : '');
  const described = (form: 'create' | 'link') => (v.error && v.errorIn === form ? html` aria-describedby="${form}-error"` : '');
  return layout(`Welcome from ${v.providerName}`, html`
<h1>Welcome</h1>
<p class="lede">You signed in with <strong>${v.providerName}</strong> as <strong>${v.who}</strong>. This is your first time here.</p>
<h2 class="list-title">Create a new account</h2>
${err('create')}
<form method="post" action="/federation/continue">
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  <input type="hidden" name="action" value="create">
  <div class="field">
    <label for="new-username">Username for your new account</label>
    <input id="new-username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${v.suggestion}"${described('create')}>
  </div>
  <button class="primary" type="submit">Create account</button>
</form>
<h2 class="list-title">Or use an account you already have</h2>
<p class="muted">Sign in to it once with its password; after that, ${v.providerName} signs you in to it.</p>
${err('link')}
<form method="post" action="/federation/continue">
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  <input type="hidden" name="action" value="link">
  <div class="field">
    <label for="link-username">Your username</label>
    <input id="link-username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${v.linkUsername ?? ''}"${described('link')}>
  </div>
  <div class="field">
    <label for="link-password">Your password</label>
    <input id="link-password" name="password" type="password" autocomplete="current-password" required${described('link')}>
  </div>
  <button type="submit">Link account</button>
</form>`);
}
