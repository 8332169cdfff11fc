import type { Passkey } from '../../core/mfa/ports.js';
import { html, layout, type Raw } from './html.js';

/** The pages that use passkeys load this script (same origin: the CSP allows no inline script). */
export const PASSKEY_SCRIPT_PATH = '/assets/passkeys.js';

const when = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The security page's passkey list (each removable with a proof) and the form adding one. */
export function passkeySection(passkeys: Passkey[], csrf: string): Raw {
  return html`<h2 class="list-title" id="passkeys">Passkeys</h2>
<p class="muted">A passkey signs you in without a password, with your fingerprint, face or device PIN.</p>
${passkeys.length ? html`<ul class="items" aria-labelledby="passkeys">${passkeys.map((p) => html`<li class="item">
  <div class="item-main">
    <span class="item-title passkey-name">${p.name}</span>
    <span class="item-detail">Added ${when(p.createdAt)}${p.lastUsedAt ? html` · last used ${when(p.lastUsedAt)}` : ''}</span>
  </div>
  <form method="post" action="/account/security/passkeys/remove">
    <input type="hidden" name="csrf_token" value="${csrf}">
    <input type="hidden" name="id" value="${p.id}">
    <input name="password" type="password" autocomplete="current-password" aria-label="Your password (to remove ${p.name})" placeholder="Password">
    <button class="small danger" type="submit" aria-label="Remove passkey ${p.name}">Remove</button>
  </form>
</li>`)}</ul>` : ''}
<form method="post" action="/account/security/passkeys" id="add-passkey">
  <input type="hidden" name="csrf_token" value="${csrf}">
  <div class="field">
    <label for="passkey-name">Name of the new passkey</label>
    <input id="passkey-name" name="name" type="text" maxlength="64" required placeholder="My laptop">
  </div>
  <button class="small" type="submit">Add a passkey</button>
  <p class="muted" id="passkey-status" role="status"></p>
</form>`;
}

/** The passkey form (the script takes it over; without script it explains that passkeys need it). */
export function passkeySignIn(returnTo: string): Raw {
  return html`<form method="post" action="/login/passkey" id="passkey-signin">
  <input type="hidden" name="return_to" value="${returnTo}">
  <button class="primary" type="submit">Use a passkey</button>
  <p class="muted" id="passkey-status" role="status"></p>
</form>`;
}

/** A link to the passkey page; the login page itself stays free of script (it works without JavaScript). */
export function passkeyLink(returnTo: string): Raw {
  return html`<p class="links passkey-link"><a href="/login/passkey?return_to=${encodeURIComponent(returnTo)}">Use a passkey instead</a></p>`;
}

/** Adds the passkey link to a page built elsewhere (the login page keeps its own markup). */
export function withPasskeyLink(page: string, returnTo: string): string {
  return page.replace('</main>', `${passkeyLink(returnTo).html}\n</main>`);
}

/** {auth_url}/login/passkey: sign in with a passkey, no username and no password. */
export function passkeyPage(returnTo: string): string {
  return layout('Sign in with a passkey', html`
<h1>Sign in with a passkey</h1>
<p class="lede">Your device asks for your fingerprint, face or PIN.</p>
${passkeySignIn(returnTo)}
<p class="links"><a href="/login?return_to=${encodeURIComponent(returnTo)}">Use your password instead</a></p>`)
    .replace('</head>', `<script src="${PASSKEY_SCRIPT_PATH}" defer></script>\n</head>`);
}

/** WebAuthn in the browser through its own JSON helpers (WebAuthn Level 3 §5.1.9, §5.1.10). */
export const PASSKEY_SCRIPT = `(function () {
  function post(url, body) {
    return fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (b) {
        // Sudo mode: confirm it is you first; the page comes back here afterwards.
        if (b.error === 'reauth_required' && typeof b.reauth === 'string' && b.reauth.charAt(0) === '/') window.location.href = b.reauth;
        if (!r.ok) throw new Error(b.error_description || 'The passkey did not work.');
        return b;
      }); });
  }
  function say(form, text) { var el = form.querySelector('[role=status]'); if (el) el.textContent = text; }
  var add = document.getElementById('add-passkey');
  if (add) add.addEventListener('submit', function (e) {
    e.preventDefault();
    var csrf = add.elements.csrf_token.value;
    var name = add.elements.name.value;
    post('/account/security/passkeys/options', { csrf_token: csrf })
      .then(function (b) { return navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(b.options) }); })
      .then(function (cred) { return post('/account/security/passkeys', { csrf_token: csrf, name: name, response: cred.toJSON() }); })
      .then(function () { window.location.href = '/account/security?done=passkey'; })
      .catch(function (err) { say(add, err.message); });
  });
  var signin = document.getElementById('passkey-signin');
  if (signin) signin.addEventListener('submit', function (e) {
    e.preventDefault();
    post('/login/passkey/options', {})
      .then(function (b) { return navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(b.options) }); })
      .then(function (cred) { return post('/login/passkey', { response: cred.toJSON(), return_to: signin.elements.return_to.value }); })
      .then(function (b) { window.location.href = b.redirect; })
      .catch(function (err) { say(signin, err.message); });
  });
})();
`;
