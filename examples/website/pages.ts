/** The sample site's pages. Scripts are files under public/ (the CSP allows no inline script). */

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The site's mark, inline: the page fetches nothing from elsewhere. */
const MARK = `<svg class="mark" viewBox="0 0 32 32" aria-hidden="true" focusable="false"><rect width="32" height="32" rx="8" fill="currentColor"/>
<path d="M10 22V10h3.2l5.6 7.4V10H22v12h-3.2l-5.6-7.4V22z" fill="#fff"/></svg>`;

const NAV: [href: string, label: string][] = [['/', 'Home'], ['/implicit', 'Implicit flow']];

/**
 * A small application's frame: a header with the site's name, its sections
 * and a sign-in or sign-out button; the page's content; a footer.
 */
function layout(title: string, body: string, data: Record<string, string> = {}, script?: string, chrome: { path?: string; signedIn?: boolean } = {}): string {
  const attrs = Object.entries(data).map(([k, v]) => ` data-${k}="${esc(v)}"`).join('');
  const nav = NAV.map(([href, label]) => `<a href="${href}"${chrome.path === href ? ' aria-current="page"' : ''}>${label}</a>`).join('');
  const account = chrome.signedIn
    ? '<form method="post" action="/logout"><button class="button" type="submit">Sign out</button></form>'
    : '<a class="button primary" href="/login">Sign in</a>';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${esc(title)} · Northwind Notes</title><link rel="stylesheet" href="/site.css"></head>
<body${attrs}>
<header class="top"><div class="top-inner">
<a class="brand" href="/">${MARK}<span>Northwind Notes</span></a>
<nav aria-label="Site">${nav}</nav>
<div class="account">${account}</div>
</div></header>
<main>
${body}
</main>
<footer><p>Northwind Notes is the sample website of Gatehouse: it signs people in with OAuth 2.0 and reads their profile from the resource server.</p></footer>
${script ? `<script src="${script}"></script>` : ''}</body></html>`;
}

const profileBlock = `<section id="profile" class="profile" aria-live="polite"><p class="muted">Loading your profile…</p></section>`;

export function homePage(v: { signedIn: boolean; apiUrl: string }): string {
  if (!v.signedIn) {
    return layout('Welcome', `<section class="hero">
<h1>Welcome</h1>
<p class="lede">Your notes, on every device. Sign in with your Gatehouse account to see your profile here.</p>
<p><a class="button primary large" id="sign-in" href="/login">Sign in with Gatehouse</a></p>
</section>
<section class="card">
<h2>How this site signs you in</h2>
<p>It uses the authorization code flow with PKCE, keeps the refresh token on its server, and reads your profile from <code>${esc(v.apiUrl)}/user</code>.</p>
<p class="muted">Or try the <a href="/implicit">implicit flow page</a>, where the browser gets the token directly.</p>
</section>`, {}, undefined, { path: '/', signedIn: false });
  }
  return layout('Your profile', `<h1>Your profile</h1>
<section class="card">
${profileBlock}
<p class="muted small" id="token-info"></p>
</section>`, { api: v.apiUrl }, '/app.js', { path: '/', signedIn: true });
}

export function implicitPage(v: { authorize: string; clientId: string; redirectUri: string; scope: string; apiUrl: string }): string {
  return layout('Implicit flow', `<h1>Implicit flow</h1>
<p class="lede">The access token comes back in the URL fragment and never reaches this site's server (RFC 6749 §4.2).
RFC 9700 advises against this flow; it is here to show how it works.</p>
<p><button class="button primary" id="start" type="button">Sign in (implicit)</button></p>`,
  { authorize: v.authorize, client: v.clientId, redirect: v.redirectUri, scope: v.scope }, '/implicit.js', { path: '/implicit' });
}

export function implicitCallbackPage(v: { apiUrl: string; issuer: string }): string {
  return layout('Implicit flow', `<h1>Implicit flow</h1>
<p id="status" role="status">Reading the token from the address…</p>
<section class="card">${profileBlock}</section>`, { api: v.apiUrl, issuer: v.issuer }, '/implicit-callback.js', { path: '/implicit' });
}

export function deniedPage(error: string, description: string | null): string {
  const text = error === 'access_denied'
    ? 'You did not allow this site to see your profile, so it has nothing to show. You can sign in again whenever you like.'
    : `Gatehouse answered with an error: ${description ?? error}.`;
  return layout('Access denied', `<h1 id="denied">Access denied</h1>
<p role="alert">${esc(text)}</p>
<p class="muted">error=<code>${esc(error)}</code></p>
<p class="actions"><a class="button primary" href="/login">Try again</a> <a href="/">Home</a></p>`);
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<h1>${esc(title)}</h1><p role="alert">${esc(message)}</p><p><a href="/">Home</a></p>`);
}
