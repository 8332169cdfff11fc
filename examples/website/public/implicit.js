// Starts the implicit flow (RFC 6749 §4.2.1): state kept in sessionStorage to check the answer.
'use strict';

document.getElementById('start').addEventListener('click', () => {
  const d = document.body.dataset;
  const state = crypto.randomUUID();
  sessionStorage.setItem('implicit_state', state);
  const q = new URLSearchParams({ response_type: 'token', client_id: d.client, redirect_uri: d.redirect, scope: d.scope, state });
  location.assign(`${d.authorize}?${q}`);
});
