import type { AccountApp, AccountSession } from '../../core/oidc/account.js';
import { html, layout, type Raw } from './html.js';
import { scopeTitle } from './pages.js';
import { profileSections, type ProfileView } from './account-profile.js';

/** "2025-03-01 14:05 UTC": the server knows no time zone of the person, and the page runs no script. */
function when(ms: number): Raw {
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}

/**
 * The browser's name and major version from its User-Agent, most specific
 * first: Edge and Opera also say Chrome, and Chrome also says Safari.
 * (A few patterns rather than ua-parser-js, whose current major is AGPL.)
 */
const BROWSERS: [name: string, pattern: RegExp][] = [
  ['Edge', /Edg(?:e|A|iOS)?\/(\d+)/],
  ['Opera', /OPR\/(\d+)/],
  ['Samsung Internet', /SamsungBrowser\/(\d+)/],
  ['Firefox', /(?:Firefox|FxiOS)\/(\d+)/],
  ['Chromium', /(?:Chromium|HeadlessChrome)\/(\d+)/],
  ['Chrome', /(?:Chrome|CriOS)\/(\d+)/],
  ['Safari', /Version\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//],
  ['curl', /^curl\/(\d+)/],
];

/** A browser's self-description, shortened to what a person recognises ("Firefox 133 on Linux"). */
export function describeBrowser(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const ua = userAgent;
  const found = BROWSERS.map(([name, re]) => [name, re.exec(ua)?.[1]] as const).find(([, version]) => version !== undefined);
  const browser = found ? `${found[0]} ${found[1]}` : undefined;
  const os = /Android/.test(ua) ? 'Android'
    : /iPhone|iPad/.test(ua) ? 'iOS'
      : /Windows/.test(ua) ? 'Windows'
        : /Mac OS X|Macintosh/.test(ua) ? 'macOS'
          : /Linux|X11/.test(ua) ? 'Linux'
            : undefined;
  if (browser && os) return `${browser} on ${os}`;
  return browser ?? os ?? ua.slice(0, 60);
}

export interface AccountView {
  username: string;
  name: string | null;
  csrf: string;
  sessions: AccountSession[];
  apps: AccountApp[];
  /** A short confirmation after a change ("Signed out of …"). */
  notice?: string;
  /** The account's own name, e-mail, password and deletion (src/http/pages/account-profile.ts). */
  profile?: ProfileView;
}

function sessionItem(s: AccountSession, csrf: string): Raw {
  const apps = s.apps.length ? s.apps.map((a) => a.name).join(', ') : 'none yet';
  const lastUse = s.current ? html`Active now` : html`Last active ${when(s.lastUsedAt ?? s.authTime)}`;
  return html`<li class="item session"${s.current ? html` aria-current="true"` : ''}>
  <div class="item-main">
    <span class="item-title">${describeBrowser(s.userAgent)}${s.current ? html` <span class="badge">This browser</span>` : ''}</span>
    <span class="item-detail">${s.ip ? html`<span class="ip">${s.ip}</span> · ` : ''}${lastUse}</span>
    <span class="item-detail">Signed in ${when(s.authTime)} · until ${when(s.expiresAt)}</span>
    <span class="item-detail">Apps signed in: ${apps}</span>
  </div>
  <form method="post" action="/account/sessions/revoke">
    <input type="hidden" name="csrf_token" value="${csrf}">
    <input type="hidden" name="sid" value="${s.sid}">
    <button class="small" type="submit" aria-label="Sign out ${describeBrowser(s.userAgent)}${s.current ? ' (this browser)' : ''}">Sign out</button>
  </form>
</li>`;
}

function appItem(a: AccountApp, csrf: string): Raw {
  const can = a.scope.length ? a.scope.map(scopeTitle).join(' · ') : 'Know that you signed in';
  return html`<li class="item">
  <div class="item-main">
    <span class="item-title app-name">${a.name}</span>
    <span class="item-detail">${can}</span>
    <span class="item-detail">Allowed ${when(a.grantedAt)}</span>
  </div>
  <form method="post" action="/account/apps/revoke">
    <input type="hidden" name="csrf_token" value="${csrf}">
    <input type="hidden" name="client_id" value="${a.clientId}">
    <button class="small danger" type="submit" aria-label="Remove access of ${a.name}">Remove access</button>
  </form>
</li>`;
}

/** The account page ({auth_url}/account): where the person is signed in, and which applications have access. */
export function accountPage(v: AccountView): string {
  const who = v.name ? html`<strong>${v.name}</strong> <span class="muted">(${v.username})</span>` : html`<strong>${v.username}</strong>`;
  return layout('Your account', html`
<h1>Your account</h1>
<p class="lede">Signed in as ${who}</p>
${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ''}
<h2 class="list-title" id="sessions">Where you are signed in</h2>
<p class="muted">Signing out of a browser signs it out of every app it signed in to.</p>
<ul class="items" aria-labelledby="sessions">${v.sessions.map((s) => sessionItem(s, v.csrf))}</ul>
${v.sessions.some((s) => !s.current)
    ? html`<form method="post" action="/account/sessions/others">
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  <button class="danger" type="submit">Sign out everywhere else</button>
</form>`
    : ''}
<h2 class="list-title" id="apps">Apps with access to your account</h2>
${v.apps.length
    ? html`<p class="muted">Removing access signs the app out and ends what it was allowed; it must ask you again.</p>
<ul class="items" aria-labelledby="apps">${v.apps.map((a) => appItem(a, v.csrf))}</ul>`
    : html`<p class="muted">No app has access to your account.</p>`}
${v.profile ? profileSections(v.profile) : ''}
<p class="links"><a href="/account/security">Sign-in security</a> · <a href="/">Gatehouse home</a></p>`);
}

/** RP-initiated logout without proof that the application asking is the person's (OpenID Connect RP-Initiated Logout 1.0 §2). */
export function logoutConfirmPage(v: { username: string; clientName?: string; csrf: string; fields: Record<string, string | undefined> }): string {
  const hidden = Object.entries(v.fields)
    .filter((e): e is [string, string] => e[1] !== undefined)
    .map(([k, val]) => html`<input type="hidden" name="${k}" value="${val}">`);
  return layout('Sign out?', html`
<h1>Sign out of Gatehouse?</h1>
<p class="lede">${v.clientName ? html`<strong class="app-name">${v.clientName}</strong> asks to sign you out.` : 'An application asks to sign you out.'}</p>
<p class="account">Signed in as <strong>${v.username}</strong></p>
<p class="note">Signing out here signs you out of every app you signed in to with this account in this browser.</p>
<form method="post" action="/session/end/confirm">
  <input type="hidden" name="csrf_token" value="${v.csrf}">
  ${hidden}
  <div class="actions">
    <button type="submit" name="logout" value="no">Stay signed in</button>
    <button class="primary" type="submit" name="logout" value="yes">Sign out</button>
  </div>
</form>`);
}

export function signedOutPage(): string {
  return layout('Signed out', html`<h1>You are signed out</h1>
<p class="lede">You signed out of Gatehouse and of the apps you used with it in this browser.</p>
<p><a class="button primary" href="/login">Sign in again</a></p>`);
}
