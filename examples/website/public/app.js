// Browser side of the authorization code flow (spec §4 rule 1.6): it gets the
// access token from its own server (never the refresh token), calls the
// resource server with it, and asks for a fresh one 30 s before expiry.
'use strict';

const api = document.body.dataset.api;
const profile = document.getElementById('profile');
const info = document.getElementById('token-info');

/** Initials for the avatar: the first letters of the first two words of the name, else of the username. */
function initials(fields) {
  const words = String(fields.name || fields.username || '?').trim().split(/\s+/);
  return words.slice(0, 2).map((w) => Array.from(w)[0] || '').join('').toUpperCase();
}

function show(fields) {
  const head = document.createElement('div');
  head.className = 'profile-head';
  const avatar = document.createElement('div');
  avatar.className = 'avatar';
  avatar.setAttribute('aria-hidden', 'true');
  avatar.textContent = initials(fields);
  const who = document.createElement('div');
  const name = document.createElement('p');
  name.className = 'profile-name';
  name.textContent = fields.name || fields.username;
  const user = document.createElement('p');
  user.className = 'profile-user';
  user.textContent = fields.email ? `@${fields.username} · ${fields.email}` : `@${fields.username}`;
  who.append(name, user);
  head.append(avatar, who);
  const dl = document.createElement('dl');
  for (const [k, v] of Object.entries(fields)) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v === null ? '(not set)' : String(v);
    dd.dataset.field = k;
    dl.append(dt, dd);
  }
  profile.replaceChildren(head, dl);
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
