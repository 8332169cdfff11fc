// Solves the page's proof-of-work challenge (ALTCHA v1, SHA-256: the number n
// with SHA-256(salt + n) = challenge) with the browser's own crypto.subtle,
// then fills the form's `altcha` field. Served from this origin only (CSP
// script-src 'self'); no outside call.
(function () {
  'use strict';
  var box = document.getElementById('pow');
  if (!box || !window.crypto || !crypto.subtle) return;
  var form = box.closest('form');
  var field = form.querySelector('input[name="altcha"]');
  var status = document.getElementById('pow-status');
  var button = form.querySelector('button[type="submit"]');
  var c = JSON.parse(box.getAttribute('data-challenge'));
  var enc = new TextEncoder();
  var BATCH = 500;
  function hex(buf) {
    var b = new Uint8Array(buf), s = '';
    for (var i = 0; i < b.length; i++) s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
    return s;
  }
  function batch(from) {
    if (from > c.maxnumber) return Promise.resolve(-1);
    var tries = [];
    for (var n = from; n < from + BATCH && n <= c.maxnumber; n++) {
      tries.push(crypto.subtle.digest('SHA-256', enc.encode(c.salt + n)).then(function (k) {
        return function (h) { return hex(h) === c.challenge ? k : -1; };
      }(n)));
    }
    return Promise.all(tries).then(function (found) {
      for (var i = 0; i < found.length; i++) if (found[i] >= 0) return found[i];
      return batch(from + BATCH);
    });
  }
  button.disabled = true;
  batch(0).then(function (number) {
    if (number < 0) { status.textContent = 'The check failed. Reload the page.'; return; }
    field.value = btoa(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: number, salt: c.salt, signature: c.signature }));
    status.textContent = 'Ready.';
    button.disabled = false;
  });
})();
