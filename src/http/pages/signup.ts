import type { Challenge } from '../../core/account/proof-of-work.js';
import { html, layout, type Raw } from './html.js';

/** The sign-up page and the login page once challenged run one first-party script: no inline script, nothing from elsewhere. */
export const POW_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
export const POW_SCRIPT_PATH = '/assets/proof-of-work.js';

/**
 * The proof-of-work field: the script (src/http/auth/static/pow.js) solves
 * the challenge in `data-challenge` and fills the hidden `altcha` field;
 * without script the form cannot be sent, and the page says why.
 */
export function proofOfWorkField(challenge: Challenge): Raw {
  return html`<input type="hidden" name="altcha" value="">
<div id="pow" class="muted" data-challenge="${JSON.stringify(challenge)}"><span id="pow-status" role="status">Checking that you are a person…</span></div>
<noscript><p class="error">This form needs JavaScript: your browser solves a small puzzle first, so that programs cannot send it in bulk. Turn JavaScript on for this site and reload.</p></noscript>
<script src="${POW_SCRIPT_PATH}" defer></script>`;
}

export interface SignupView {
  csrf: string;
  challenge: Challenge;
  invitation?: string;
  username?: string;
  email?: string;
  error?: string;
  /** Whether a verification link will be e-mailed. */
  mailEnabled: boolean;
}

export function signupPage(v: SignupView): string {
  const described = v.error ? html` aria-describedby="signup-error"` : '';
  return layout('Create an account', html`
<h1>Create an account</h1>
<p class="lede">${v.invitation ? 'You were invited to Gatehouse.' : 'One account for every app that signs in with Gatehouse.'}</p>
${v.error ? html`<p class="error" id="signup-error" role="alert">${v.error}</p>` : ''}
<form method="post" action="/signup">
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  ${v.invitation ? html`<input type="hidden" name="invitation" value="${v.invitation}">` : ''}
  <div class="field">
    <label for="username">Username</label>
    <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required maxlength="64" value="${v.username ?? ''}"${described} autofocus>
  </div>
  <div class="field">
    <label for="email">E-mail address</label>
    <input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${v.email ?? ''}"${described}>
  </div>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024"${described}>
    <p class="muted">At least 8 characters. A few words you will remember work well; common passwords are refused.</p>
  </div>
  ${proofOfWorkField(v.challenge)}
  <button class="primary" type="submit">Create account</button>
</form>
<p class="muted">${v.mailEnabled ? 'We e-mail you a link to confirm your address.' : 'This server sends no e-mail: your address stays unconfirmed.'} Already have an account? <a href="/login">Sign in</a></p>`);
}

/** The login page's link to sign up, when sign-up is on (not with `invite`: that needs a link). */
export function withSignupLink(page: string): string {
  return page.replace('</main>', `${html`<p class="muted signup-link">New here? <a href="/signup">Create an account</a></p>`.html}\n</main>`);
}
