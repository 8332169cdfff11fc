// Browser side of the authorization code flow (spec §4 rule 1.6): it gets the
// access token from its own server (never the refresh token), calls the
// resource server with it, and asks for a fresh one 30 s before expiry.
'use strict';

const api = document.body.dataset.api;
const profile = document.getElementById('profile');
const info = document.getElementById('token-info');

function show(fields) {
  const dl = document.createElement('dl');
  for (const [k, v] of Object.entries(fields)) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v === null ? '(not set)' : String(v);
    dd.dataset.field = k;
    dl.append(dt, dd);
  }
  profile.replaceChildren(dl);
}

function fail(text) {
  const p = document.createElement('p');
  p.setAttribute('role', 'alert');
  p.textContent = text;
  profile.replaceChildren(p);
}

async function load() {
  const res = await fetch('/session/token', { credentials: 'same-origin' });
  if (res.status === 401) return fail('You are signed out. Sign in again.');
  const token = await res.json();
  const user = await fetch(`${api}/user`, { headers: { authorization: `Bearer ${token.access_token}` } });
  if (!user.ok) return fail(`The resource server said ${user.status}: ${user.headers.get('www-authenticate') ?? ''}`);
  show(await user.json());
  const at = new Date(token.refresh_at);
  info.textContent = `Access token (scope "${token.scope}") refreshes at ${at.toLocaleTimeString()}.`;
  // 30 seconds before expiry the site's server refreshes; fetch the new token then.
  setTimeout(load, Math.max(0, token.refresh_at - Date.now()));
}

load().catch((e) => fail(String(e)));
