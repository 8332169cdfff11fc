import { html, layout } from './html.js';

/** After a verification link was followed: the address now counts. */
export function emailVerifiedPage(v: { email: string; changed: boolean; signedIn: boolean }): string {
  return layout('E-mail address confirmed', html`<h1>E-mail address confirmed</h1>
<p class="lede" role="status">${v.changed ? html`Your account's e-mail address is now <strong>${v.email}</strong>.` : html`<strong>${v.email}</strong> is confirmed as your account's e-mail address.`}</p>
<p><a class="button primary" href="${v.signedIn ? '/account' : '/login'}">${v.signedIn ? 'Back to your account' : 'Sign in'}</a></p>`);
}

/** A link that is unknown, used, replaced by a newer one, or past its 24 hours: nothing was changed. */
export function emailLinkInvalidPage(): string {
  return layout('Link not valid', html`<div class="error-mark" aria-hidden="true">!</div>
<h1>This link does not work</h1>
<p class="error" role="alert">This confirmation link was already used, was replaced by a newer one, or has expired (links work once, for 24 hours). Nothing was changed.</p>
<p class="muted">To confirm your address, sign in and send a new link from your account page.</p>
<p><a class="button" href="/account">Your account</a></p>`);
}
