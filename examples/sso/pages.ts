/** The example sites' pages: plain HTML forms, no script. */

const esc = (s: unknown) => String(s ?? '').replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface SiteLook {
  title: string;
  /** An accent colour, so the two sites are told apart at a glance. */
  accent: string;
}

function layout(look: SiteLook, heading: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(heading)} · ${esc(look.title)}</title>
<style>
:root { color-scheme: light dark; font-family: system-ui, sans-serif; --accent: ${look.accent}; }
body { margin: 0; } header { background: var(--accent); color: #fff; padding: .75rem 1rem; font-weight: 700; }
main { max-width: 40rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
.button, button { display: inline-block; padding: .5rem 1rem; border-radius: .4rem; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; font: inherit; cursor: pointer; text-decoration: none; margin: .25rem .5rem .25rem 0; }
.secondary { background: none; color: inherit; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; } dt { font-weight: 600; }
.muted { opacity: .75; } [role=alert] { border-left: 4px solid var(--accent); padding: .5rem .75rem; }
form { display: inline; }
</style></head>
<body><header>${esc(look.title)}</header><main>
<h1>${esc(heading)}</h1>
${body}
</main></body></html>`;
}

export interface SignedInView {
  name: string;
  sub: string;
  sid: string | undefined;
  authTime: number | undefined;
  email: string | undefined;
  account: string;
  peers: { title: string; url: string }[];
  notice?: string;
}

const peerLinks = (peers: { title: string; url: string }[]) =>
  peers.length ? `<p class="muted">Also try ${peers.map((p) => `<a href="${esc(p.url)}">${esc(p.title)}</a>`).join(', ')}: you are signed in there too once you click “Sign in”.</p>` : '';

export function signedInPage(look: SiteLook, v: SignedInView): string {
  const when = v.authTime ? new Date(v.authTime * 1000).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : 'unknown';
  return layout(look, `Welcome, ${v.name}`, `
${v.notice ? `<p role="alert">${esc(v.notice)}</p>` : ''}
<p id="status">Signed in as <strong data-field="name">${esc(v.name)}</strong> through Gatehouse.</p>
<dl>
  <dt>Subject (sub)</dt><dd data-field="sub">${esc(v.sub)}</dd>
  <dt>Gatehouse session (sid)</dt><dd data-field="sid">${esc(v.sid ?? '—')}</dd>
  <dt>Signed in at</dt><dd data-field="auth_time">${esc(when)}</dd>
  <dt>E-mail</dt><dd data-field="email">${esc(v.email ?? '—')}</dd>
</dl>
<p>
  <form method="post" action="/refresh"><button type="submit" class="secondary">Refresh profile</button></form>
  <form method="post" action="/logout"><button type="submit">Sign out everywhere</button></form>
</p>
<p class="muted"><a href="${esc(v.account)}">Your Gatehouse account</a>: where you are signed in, and which apps have access.</p>
${peerLinks(v.peers)}`);
}

export function signedOutPage(look: SiteLook, peers: { title: string; url: string }[], notice?: string): string {
  return layout(look, look.title, `
${notice ? `<p role="alert" id="notice">${esc(notice)}</p>` : ''}
<p id="status">You are not signed in.</p>
<p><a class="button" href="/login">Sign in with Gatehouse</a></p>
${peerLinks(peers)}`);
}

export function errorPage(look: SiteLook, message: string): string {
  return layout(look, 'Sign-in failed', `<p role="alert">${esc(message)}</p><p><a href="/">Home</a></p>`);
}
