/** The sample site's pages. Scripts are files under public/ (the CSP allows no inline script). */

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function layout(title: string, body: string, data: Record<string, string> = {}, script?: string): string {
  const attrs = Object.entries(data).map(([k, v]) => ` data-${k}="${esc(v)}"`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Sample site</title><link rel="stylesheet" href="/site.css"></head>
<body${attrs}><main>
<p class="brand"><a href="/">Sample site</a> · a client of Gatehouse</p>
${body}
</main>${script ? `<script src="${script}"></script>` : ''}</body></html>`;
}

const profileBlock = `<section id="profile" aria-live="polite"><p class="muted">Loading your profile…</p></section>`;

export function homePage(v: { signedIn: boolean; apiUrl: string }): string {
  if (!v.signedIn) {
    return layout('Welcome', `<h1>Welcome</h1>
<p>This site signs you in with Gatehouse (authorization code flow with PKCE) and shows your profile from <code>${esc(v.apiUrl)}/user</code>.</p>
<p><a class="button" id="sign-in" href="/login">Sign in with Gatehouse</a></p>
<p class="muted">Or try the <a href="/implicit">implicit flow page</a>, where the browser gets the token directly.</p>`);
  }
  return layout('Your profile', `<h1>Your profile</h1>
${profileBlock}
<p class="muted" id="token-info"></p>
<form method="post" action="/logout"><button type="submit">Sign out</button></form>`, { api: v.apiUrl }, '/app.js');
}

export function implicitPage(v: { authorize: string; clientId: string; redirectUri: string; scope: string; apiUrl: string }): string {
  return layout('Implicit flow', `<h1>Implicit flow</h1>
<p>The access token comes back in the URL fragment and never reaches this site's server (RFC 6749 §4.2).
RFC 9700 advises against this flow; it is here to show how it works.</p>
<p><button id="start" type="button">Sign in (implicit)</button></p>`,
  { authorize: v.authorize, client: v.clientId, redirect: v.redirectUri, scope: v.scope }, '/implicit.js');
}

export function implicitCallbackPage(v: { apiUrl: string; issuer: string }): string {
  return layout('Implicit flow', `<h1>Implicit flow</h1>
<p id="status" role="status">Reading the token from the address…</p>
${profileBlock}`, { api: v.apiUrl, issuer: v.issuer }, '/implicit-callback.js');
}

export function deniedPage(error: string, description: string | null): string {
  const text = error === 'access_denied'
    ? 'You did not allow this site to see your profile, so it has nothing to show. You can sign in again whenever you like.'
    : `Gatehouse answered with an error: ${description ?? error}.`;
  return layout('Access denied', `<h1 id="denied">Access denied</h1>
<p role="alert">${esc(text)}</p>
<p class="muted">error=<code>${esc(error)}</code></p>
<p><a class="button" href="/login">Try again</a> <a href="/">Home</a></p>`);
}

export function messagePage(title: string, message: string): string {
  return layout(title, `<h1>${esc(title)}</h1><p role="alert">${esc(message)}</p><p><a href="/">Home</a></p>`);
}
