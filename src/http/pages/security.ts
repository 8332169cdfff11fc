import type { Passkey } from '../../core/mfa/ports.js';
import { html, layout, raw, type Raw } from './html.js';
import { chatLinkSection } from './chat-link.js';
import { PASSKEY_SCRIPT_PATH, passkeyLink, passkeySection } from './passkeys.js';

export interface SecurityView {
  username: string;
  csrf: string;
  totp: 'off' | 'pending' | 'on';
  /** While the app is being set up: the secret to type, the otpauth:// URI and its QR code (inline SVG). */
  setup?: { secret: string; uri: string; qrSvg: string };
  passkeys: Passkey[];
  recoveryCodesLeft: number;
  /** Undefined: no linked chat (the option is not offered). */
  chatApproval: boolean | undefined;
  notice?: string;
  error?: string;
}

const hidden = (csrf: string) => html`<input type="hidden" name="csrf_token" value="${csrf}">`;

/** Removing a factor asks for the password or a code of another factor. */
function proofFields(id: string): Raw {
  return html`<div class="field">
    <label for="${id}-password">Your password</label>
    <input id="${id}-password" name="password" type="password" autocomplete="current-password">
  </div>
  <div class="field">
    <label for="${id}-code">or a code from your app or a recovery code</label>
    <input id="${id}-code" name="code" type="text" inputmode="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false">
  </div>`;
}

function totpSection(v: SecurityView): Raw {
  if (v.totp === 'on') {
    return html`<p>Authenticator app: <strong>on</strong>.</p>
<form method="post" action="/account/security/totp/remove">${hidden(v.csrf)}${proofFields('totp-remove')}
  <button class="small danger" type="submit">Remove the authenticator app</button>
</form>`;
  }
  if (v.setup) {
    return html`<p>Scan this code with your authenticator app, or enter the key by hand.</p>
<div class="qr">${raw(v.setup.qrSvg)}</div>
<p class="muted">Key: <code id="totp-secret">${v.setup.secret}</code></p>
<p class="muted">Link: <code id="totp-uri">${v.setup.uri}</code></p>
<form method="post" action="/account/security/totp/confirm">${hidden(v.csrf)}
  <div class="field">
    <label for="code">Code from the app</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required autofocus>
  </div>
  <button class="primary" type="submit">Turn on</button>
</form>`;
  }
  return html`<p>Authenticator app: <strong>off</strong>. With it on, signing in also asks for a code from your phone.</p>
<form method="post" action="/account/security/totp/start">${hidden(v.csrf)}
  <button class="primary" type="submit">Set up an authenticator app</button>
</form>`;
}

function chatSection(v: SecurityView): Raw {
  if (v.chatApproval === undefined) return html``;
  return html`<h2 class="list-title" id="chat-approval">Approve sign-ins in chat</h2>
<p class="muted">After your password, the sign-in page shows a number; the notification bot asks you to tap the same number in your chat. A wrong number or "Not me" stops the sign-in.</p>
<form method="post" action="/account/security/chat-approval">${hidden(v.csrf)}
  <input type="hidden" name="enabled" value="${v.chatApproval ? 'off' : 'on'}">
  <p>Approval in chat: <strong>${v.chatApproval ? 'on' : 'off'}</strong></p>
  <button class="small" type="submit">${v.chatApproval ? 'Turn off' : 'Turn on'}</button>
</form>`;
}

/** {auth_url}/account/security: second factors, each with its own form. */
export function securityPage(v: SecurityView): string {
  return layout('Security', html`
<h1>Sign-in security</h1>
<p class="lede">Signed in as <strong>${v.username}</strong></p>
${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ''}
${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ''}
<h2 class="list-title" id="totp">Authenticator app</h2>
${totpSection(v)}
<h2 class="list-title" id="recovery">Recovery codes</h2>
<p class="muted">${v.recoveryCodesLeft} unused. Each works once, in place of a code from your app.</p>
${v.totp === 'on' || v.passkeys.length ? html`<form method="post" action="/account/security/recovery-codes">${hidden(v.csrf)}
  <button class="small" type="submit">Make ten new codes</button>
</form>` : ''}
${passkeySection(v.passkeys, v.csrf)}
${chatSection(v)}
${chatLinkSection(v.csrf)}
<p class="links"><a href="/account">Your account</a></p>`).replace('</head>', `<script src="${PASSKEY_SCRIPT_PATH}" defer></script>\n</head>`);
}

export interface ReauthView {
  /** Where the form posts: the sensitive change itself (it continues once the proof is right), or /account/reauth. */
  action: string;
  /** The change's own fields, carried over unchanged (the CSRF token among them). */
  hidden: [string, string][];
  /** A `code` field besides the password (not when the change's own form has a `code`, as the app's confirmation does). */
  codes: boolean;
  /** Where "sign in again" continues to: a local path. */
  signInReturnTo: string;
  error?: string;
}

/** Sudo mode (src/http/auth/reauth.ts): the password, or a code, before a sensitive change. */
export function reauthPage(v: ReauthView): string {
  return layout('Confirm it is you', html`
<h1>Confirm it is you</h1>
<p class="lede">This changes how your account is protected. Enter your password${v.codes ? ' or a code' : ''} to continue.</p>
${v.error ? html`<p class="error" id="reauth-error" role="alert">${v.error}</p>` : ''}
<form method="post" action="${v.action}" id="reauth-form">
${v.hidden.map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <div class="field">
    <label for="reauth-password">Your password</label>
    <input id="reauth-password" name="password" type="password" autocomplete="current-password" autofocus${v.error ? raw(' aria-describedby="reauth-error"') : ''}>
  </div>
${v.codes ? html`  <div class="field">
    <label for="reauth-code">or a code from your authenticator app, or a recovery code</label>
    <input id="reauth-code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="64">
  </div>` : ''}
  <button class="primary" type="submit">Continue</button>
</form>
<p class="links"><a href="/login?return_to=${encodeURIComponent(v.signInReturnTo)}">Sign in again instead</a> · <a href="/account/security">Cancel</a></p>`);
}

export function recoveryCodesPage(codes: string[]): string {
  return layout('Recovery codes', html`
<h1>Your recovery codes</h1>
<p class="lede">Keep them somewhere safe. Each works once when your phone is not at hand. They are shown only now.</p>
<ul class="recovery-codes" id="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
<p class="links"><a href="/account/security">Done</a></p>`);
}

export interface SecondStepView {
  csrf: string;
  /** The number to tap in chat, while an approval waits. */
  approvalNumber?: number;
  /** The account has a passkey: offer it, continuing to this address. */
  passkeyReturnTo?: string;
  error?: string;
}

/** After the right password: a code, or the number to tap in chat. No session exists until this passes. */
export function secondStepPage(v: SecondStepView): string {
  const approval = v.approvalNumber === undefined ? html`` : html`
<section class="approval">
  <p>We sent a message to your chat. Tap this number there:</p>
  <p class="approval-number" id="approval-number">${String(v.approvalNumber)}</p>
  <form method="post" action="/login/second-step/approved" id="approved-form">${hidden(v.csrf)}
    <button class="primary" type="submit">I tapped it — continue</button>
  </form>
  <p class="muted">This page continues by itself once you tap it.</p>
</section>
<p class="or">or</p>`;
  const page = layout('Second step', html`
<h1>Confirm it is you</h1>
${v.error ? html`<p class="error" id="code-error" role="alert">${v.error}</p>` : ''}
${approval}
<form method="post" action="/login/second-step">${hidden(v.csrf)}
  <div class="field">
    <label for="code">Code from your authenticator app, or a recovery code</label>
    <input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="64" required${v.error ? raw(' aria-describedby="code-error"') : ''}${v.approvalNumber === undefined ? raw(' autofocus') : ''}>
  </div>
  <button${v.approvalNumber === undefined ? raw(' class="primary"') : ''} type="submit">Continue</button>
</form>
${v.passkeyReturnTo !== undefined ? passkeyLink(v.passkeyReturnTo) : ''}
<p class="links"><a href="/login">Start again</a></p>`);
  if (v.approvalNumber === undefined) return page;
  // Script continues the page at once; without script, a reload every 3 s does (the GET completes an approved sign-in).
  return page.replace('</head>', '<script src="/assets/second-step.js" defer></script>\n<noscript><meta http-equiv="refresh" content="3"></noscript>\n</head>');
}

/** Long-polls the approval; once tapped it submits the continue form (the button is the fallback without script). */
export const SECOND_STEP_SCRIPT = `(function () {
  var form = document.getElementById('approved-form');
  if (!form) return;
  function poll() {
    fetch('/login/second-step/wait', { credentials: 'same-origin', headers: { accept: 'application/json' } })
      .then(function (r) { return r.json(); })
      .then(function (b) {
        if (b.state === 'approved') form.submit();
        else if (b.state === 'waiting') poll();
        else window.location.reload();
      })
      .catch(function () { setTimeout(poll, 2000); });
  }
  poll();
})();
`;
