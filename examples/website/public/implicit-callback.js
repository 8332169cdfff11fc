// Spec §4 rule 2.3: the server returned this page for the redirection URI
// without the fragment; this script reads the fragment, takes the token out,
// and hands it to the client code, which calls the resource server.
'use strict';

const d = document.body.dataset;
const status = document.getElementById('status');
const profile = document.getElementById('profile');

function fail(text) {
  status.setAttribute('role', 'alert');
  status.textContent = text;
  profile.replaceChildren();
}

async function client(token) {
  const res = await fetch(`${d.api}/user`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) return fail(`The resource server said ${res.status}.`);
  const dl = document.createElement('dl');
  for (const [k, v] of Object.entries(await res.json())) {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v === null ? '(not set)' : String(v);
    dd.dataset.field = k;
    dl.append(dt, dd);
  }
  profile.replaceChildren(dl);
}

const fragment = new URLSearchParams(location.hash.slice(1));
// Take the token out of the address bar and history at once.
history.replaceState(null, '', location.pathname);
const expected = sessionStorage.getItem('implicit_state');
sessionStorage.removeItem('implicit_state');

if (!expected || fragment.get('state') !== expected) {
  fail('This answer does not belong to a sign-in started here.');
} else if (fragment.has('iss') && fragment.get('iss') !== d.issuer) {
  fail('The answer came from another server.');
} else if (fragment.get('error')) {
  fail(fragment.get('error') === 'access_denied' ? 'Access denied: you did not allow this site to see your profile.' : `Error: ${fragment.get('error')}`);
} else if (fragment.get('access_token')) {
  status.textContent = `Token received from the fragment (${fragment.get('token_type')}, expires in ${fragment.get('expires_in')} s).`;
  status.dataset.token = 'received';
  client(fragment.get('access_token')).catch((e) => fail(String(e)));
} else {
  fail('No token in the address.');
}
