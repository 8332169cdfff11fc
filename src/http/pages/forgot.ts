import { html, layout, raw } from './html.js';

/** The pages of "Forgot password?" (src/http/auth/forgot-routes.ts). */

const hidden = (csrf: string) => html`<input type="hidden" name="csrf_token" value="${csrf}">`;

export function forgotPage(v: { csrf: string; username?: string; error?: string; mail: boolean; chat: boolean }): string {
  const described = v.error ? raw(' aria-describedby="forgot-error"') : '';
  return layout('Forgot password', html`
<h1>Forgot your password?</h1>
<p class="lede">Give your username or e-mail address. We ${v.chat ? 'ask in your linked chat' : ''}${v.chat && v.mail ? ', or ' : ''}${v.mail ? 'e-mail you a link' : ''}${!v.chat && !v.mail ? 'cannot reach you from here: e-mail is off on this server. Ask an administrator' : ''}.</p>
${v.error ? html`<p class="error" id="forgot-error" role="alert">${v.error}</p>` : ''}
<form method="post" action="/login/forgot">${hidden(v.csrf)}
  <div class="field">
    <label for="username">Username or e-mail address</label>
    <input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" maxlength="254" required value="${v.username ?? ''}"${described} autofocus>
  </div>
  <div class="actions">
    ${v.chat ? html`<button${v.mail ? '' : raw(' class="primary"')} type="submit" name="via" value="chat">Ask in my chat</button>` : ''}
    ${v.mail ? html`<button class="primary" type="submit" name="via" value="email">E-mail me a link</button>` : ''}
  </div>
</form>
<p class="links"><a href="/login">Back to sign in</a></p>`);
}

export function linkSentPage(minutes: number): string {
  return layout('Check your e-mail', html`
<h1>Check your e-mail</h1>
<p>If an account matches, we sent a link to its e-mail address. It works once, for ${String(minutes)} minutes.</p>
<p class="links"><a href="/login">Back to sign in</a></p>`);
}

/** The number to tap in chat; the page continues by itself once it is tapped (FORGOT_SCRIPT), or by its reload without script. */
export function chatWaitPage(number: number): string {
  const page = layout('Confirm in your chat', html`
<h1>Confirm in your chat</h1>
<section class="approval">
  <p>If this account has a linked chat, we sent it a message. Tap this number there:</p>
  <p class="approval-number" id="approval-number">${String(number)}</p>
  <form method="get" action="/login/forgot/reset" id="approved-form">
    <button class="primary" type="submit">I tapped it — continue</button>
  </form>
  <p class="muted">This page continues by itself once you tap it. The number works for 2 minutes.</p>
</section>
<p class="links"><a href="/login/forgot">Start again</a></p>`);
  return page.replace('</head>', '<script src="/assets/forgot.js" defer></script>\n<noscript><meta http-equiv="refresh" content="3"></noscript>\n</head>');
}

export function newPasswordPage(v: { csrf: string; username: string; needsCode: boolean; error?: string }): string {
  const described = v.error ? raw(' aria-describedby="reset-error"') : '';
  return layout('Choose a new password', html`
<h1>Choose a new password</h1>
<p class="lede">for <strong>${v.username}</strong>. Every session of the account is signed out.</p>
${v.error ? html`<p class="error" id="reset-error" role="alert">${v.error}</p>` : ''}
<form method="post" action="/login/forgot/reset">${hidden(v.csrf)}
  <input type="text" name="username" value="${v.username}" autocomplete="username" hidden>
  ${v.needsCode ? html`<div class="field">
    <label for="code">Code from your authenticator app, or a recovery code</label>
    <input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" maxlength="64" required${described}>
  </div>` : ''}
  <div class="field">
    <label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" minlength="8" maxlength="1024" required${described}${v.needsCode ? '' : raw(' autofocus')}>
  </div>
  <button class="primary" type="submit">Set the new password</button>
</form>`);
}

export function passwordSetPage(username: string, unlocked: boolean): string {
  return layout('Password changed', html`
<h1>Your password is changed</h1>
<p>The account <strong>${username}</strong> has its new password; every session was signed out.${unlocked ? ' It was locked and may sign in again now.' : ''}</p>
<p class="links"><a href="/login">Sign in</a></p>`);
}

/** Long-polls the tap; once approved it follows the continue link (the button is the fallback without script). */
export const FORGOT_SCRIPT = `(function () {
  var form = document.getElementById('approved-form');
  if (!form) return;
  function poll() {
    fetch('/login/forgot/wait', { credentials: 'same-origin', headers: { accept: 'application/json' } })
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
