import { html, layout, type Raw } from './html.js';

/** What the account page shows about the account itself (issue 26 item 5). */
export interface ProfileView {
  csrf: string;
  name: string | null;
  email: string;
  emailVerified: boolean;
  /** GATEHOUSE_SMTP_URL is set: a change of address is confirmed by a link. */
  mailEnabled: boolean;
  /** The password (or a second factor) was given within GATEHOUSE_REAUTH_WINDOW: no extra step before a sensitive change. */
  fresh: boolean;
  /** A refusal to show beside its form: which form, and why. */
  error?: { form: 'name' | 'email' | 'password' | 'delete'; message: string };
}

const errorFor = (v: ProfileView, form: NonNullable<ProfileView['error']>['form']): Raw | string =>
  v.error?.form === form ? html`<p class="error" id="${form}-error" role="alert">${v.error.message}</p>` : '';

/** The sections of the account page that change the account: name, e-mail, password, deletion. Plain forms, no script. */
export function profileSections(v: ProfileView): Raw {
  const csrf = html`<input type="hidden" name="csrf_token" value="${v.csrf}">`;
  return html`
<h2 class="list-title" id="profile">Your name</h2>
${errorFor(v, 'name')}
<form method="post" action="/account/name">
  ${csrf}
  <div class="field">
    <label for="account-name">Name (as apps show it)</label>
    <input id="account-name" name="name" type="text" autocomplete="name" maxlength="200" value="${v.name ?? ''}">
  </div>
  <button type="submit">Save name</button>
</form>
<h2 class="list-title" id="email">E-mail address</h2>
<p>${v.email} ${v.emailVerified ? html`<span class="badge" id="email-status">Confirmed</span>` : html`<span class="badge" id="email-status">Not confirmed</span>`}</p>
${errorFor(v, 'email')}
${v.mailEnabled
    ? html`<p class="muted">A new address counts only once you follow the link we send to it.</p>`
    : html`<p class="muted">This server sends no e-mail, so a new address cannot be confirmed here: ask an administrator.</p>`}
<form method="post" action="/account/email">
  ${csrf}
  <div class="field">
    <label for="account-email">New e-mail address</label>
    <input id="account-email" name="email" type="email" autocomplete="email" maxlength="254" required>
  </div>
  <button type="submit"${v.mailEnabled ? '' : html` disabled`}>Send a confirmation link</button>
</form>
<h2 class="list-title" id="password">Password</h2>
${errorFor(v, 'password')}
<form method="post" action="/account/password">
  ${csrf}
  <div class="field">
    <label for="current-password">Current password</label>
    <input id="current-password" name="current_password" type="password" autocomplete="current-password" required>
  </div>
  <div class="field">
    <label for="new-password">New password</label>
    <input id="new-password" name="new_password" type="password" autocomplete="new-password" minlength="8" maxlength="1024" required>
  </div>
  <p class="muted">At least 8 characters; common passwords are refused. Every other browser is signed out and apps must sign in again.</p>
  <button class="primary" type="submit">Change password</button>
</form>
<h2 class="list-title" id="delete">Delete your account</h2>
<p class="muted">Your account and what it holds are removed, every browser and app is signed out. This cannot be undone.</p>
${errorFor(v, 'delete')}
<form method="post" action="/account/delete">
  ${csrf}
  <div class="field">
    <label for="delete-password">Your password</label>
    <input id="delete-password" name="password" type="password" autocomplete="current-password" required>
  </div>
  <button class="danger" type="submit">Delete my account…</button>
</form>`;
}

/** The confirmation step of a deletion, after the password was right. */
export function deleteConfirmPage(v: { csrf: string; username: string }): string {
  return layout('Delete your account?', html`<h1>Delete your account?</h1>
<p class="lede">The account <strong>${v.username}</strong>, its second factors, linked chats and app permissions are removed, and every browser and app is signed out. This cannot be undone.</p>
<form method="post" action="/account/delete/confirm">
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  <div class="actions">
    <a class="button" href="/account">Keep my account</a>
    <button class="danger" type="submit" name="confirm" value="delete">Delete my account</button>
  </div>
</form>`);
}

export function accountDeletedPage(): string {
  return layout('Account deleted', html`<h1>Your account is deleted</h1>
<p class="lede" role="status">Your account and its personal data are removed, and every browser and app is signed out.</p>
<p><a class="button" href="/">Gatehouse home</a></p>`);
}
