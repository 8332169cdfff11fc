/**
 * Served at /assets/gatehouse.css so the pages' CSP can forbid inline styles.
 * Colours are chosen for WCAG 2.2 AA: text at least 4.5:1, field borders and
 * the focus ring at least 3:1 against what surrounds them, in both schemes.
 */
export const stylesheet = `
:root { color-scheme: light dark;
  --fg: #141a24; --muted: #4f5a6b; --bg: #eef1f6; --card: #fff; --line: #dfe4eb; --chip: #f1f4f8;
  --field: #fff; --field-line: #7d889a; --accent: #2456d6; --accent-hover: #1b45b3; --accent-fg: #fff;
  --accent-soft: #e7eefd; --danger: #a3231a; --danger-bg: #fdf1f0; --danger-line: #eaa29b; --focus: #1a47c2;
  --shadow: 0 1px 2px rgb(16 24 40 / .06), 0 12px 32px rgb(16 24 40 / .08); }
@media (prefers-color-scheme: dark) { :root {
  --fg: #e9edf3; --muted: #a9b3c2; --bg: #0d1117; --card: #161b23; --line: #2a323e; --chip: #1f2631;
  --field: #0f141b; --field-line: #6f7b8e; --accent: #6e9bff; --accent-hover: #8fb1ff; --accent-fg: #0a1022;
  --accent-soft: #1c2a47; --danger: #ffaaa2; --danger-bg: #2c1618; --danger-line: #7d3a36; --focus: #ffcf5c;
  --shadow: 0 1px 2px rgb(0 0 0 / .4), 0 12px 32px rgb(0 0 0 / .35); } }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; min-height: 100vh; min-height: 100dvh; display: grid; place-items: center; padding: 2rem 1rem;
  background: var(--bg); color: var(--fg); font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif; }
.shell { width: 100%; max-width: 27rem; }
.brand { display: flex; align-items: center; justify-content: center; gap: .5rem; margin: 0 0 1.25rem;
  font-weight: 700; font-size: 1.1rem; letter-spacing: .01em; }
.logo { width: 1.75rem; height: 1.75rem; color: var(--accent); flex: none; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 16px; padding: 2rem; box-shadow: var(--shadow);
  overflow-wrap: anywhere; }
h1 { font-size: 1.5rem; line-height: 1.25; letter-spacing: -.01em; margin: 0 0 .25rem; }
p { margin: .5rem 0; }
.lede { color: var(--muted); margin: 0 0 1.25rem; }
.lede strong { color: var(--fg); }
.muted { color: var(--muted); font-size: .95rem; }
a { color: var(--accent); text-underline-offset: .15em; }

/* Forms */
.field { margin-top: 1.1rem; }
label { display: block; font-weight: 600; margin: 0 0 .35rem; }
input[type=text], input[type=password] { display: block; width: 100%; min-height: 2.9rem; padding: .65rem .8rem; font: inherit;
  color: var(--fg); background: var(--field); border: 1px solid var(--field-line); border-radius: 10px; }
input[type=text]:hover, input[type=password]:hover { border-color: var(--fg); }
input[aria-describedby] { border-color: var(--danger); }
button, .button { display: flex; align-items: center; justify-content: center; width: 100%; min-height: 2.9rem; margin: 1.5rem 0 0;
  padding: .65rem 1rem; font: inherit; font-weight: 600; text-decoration: none; color: var(--fg); background: var(--card);
  border: 1px solid var(--field-line); border-radius: 10px; cursor: pointer; }
button:hover, .button:hover { background: var(--chip); }
button.primary, .button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
button.primary:hover, .button.primary:hover { background: var(--accent-hover); border-color: var(--accent-hover); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
input:focus-visible { outline-offset: 0; border-color: var(--focus); }

/* Messages */
.error { margin: 1rem 0 0; padding: .75rem .9rem; color: var(--danger); background: var(--danger-bg);
  border: 1px solid var(--danger-line); border-left: 4px solid var(--danger); border-radius: 10px; font-weight: 500; }
.error-mark { width: 2.75rem; height: 2.75rem; border-radius: 50%; display: grid; place-items: center; margin: 0 0 1rem;
  font-weight: 800; font-size: 1.35rem; color: var(--danger); background: var(--danger-bg); border: 2px solid var(--danger-line); }

/* Consent */
.app-mark { width: 3.5rem; height: 3.5rem; border-radius: 14px; display: grid; place-items: center; margin: 0 auto 1rem;
  font-size: 1.6rem; font-weight: 800; color: var(--accent); background: var(--accent-soft); }
/* "or" between the password form and the "Sign in with …" links. */
.or { text-align: center; margin: 1.25rem 0 -.5rem; }
.consent-title { text-align: center; font-size: 1.15rem; font-weight: 500; color: var(--muted); }
.consent-title .app-name { display: block; margin-bottom: .15rem; font-size: 1.6rem; font-weight: 750; color: var(--fg); }
.account { width: fit-content; max-width: 100%; margin: 1rem auto 0; padding: .3rem .85rem; border-radius: 999px;
  background: var(--chip); border: 1px solid var(--line); font-size: .9rem; text-align: center; }
.account .muted { font-size: inherit; }
.list-title { margin: 1.5rem 0 .25rem; padding-top: 1.25rem; border-top: 1px solid var(--line); font-size: 1rem; font-weight: 600; }
ul.scopes { list-style: none; margin: 0; padding: 0; }
ul.scopes li { display: grid; grid-template-columns: 1.5rem 1fr; column-gap: .7rem; padding: .65rem 0; }
ul.scopes li + li { border-top: 1px solid var(--line); }
ul.scopes li::before { content: "\\2713"; grid-row: 1 / span 2; width: 1.5rem; height: 1.5rem; margin-top: .05rem; border-radius: 50%;
  display: grid; place-items: center; font-size: .85rem; font-weight: 800; color: var(--accent); background: var(--accent-soft); }
.scope-title { font-weight: 600; }
.scope-detail { grid-column: 2; color: var(--muted); font-size: .92rem; }
.note { margin: 1rem 0 0; padding: .75rem .9rem; border-radius: 10px; background: var(--chip); color: var(--muted); font-size: .92rem; }
.note strong { color: var(--fg); }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1.5rem; }
.actions button { flex: 1 1 8rem; margin: 0; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: .88em;
  padding: .05em .35em; border-radius: 5px; background: var(--chip); border: 1px solid var(--line); }

/* Account page: lists of sessions and apps, each with its own small form. */
ul.items { list-style: none; margin: .5rem 0 0; padding: 0; }
ul.items li.item { display: flex; flex-wrap: wrap; align-items: center; justify-content: space-between; gap: .5rem .75rem; padding: .75rem 0; }
ul.items li.item + li.item { border-top: 1px solid var(--line); }
.item-main { display: grid; gap: .1rem; flex: 1 1 12rem; min-width: 0; }
.item-title { font-weight: 600; }
.item-detail { color: var(--muted); font-size: .9rem; }
.item form { flex: none; }
.badge { display: inline-block; margin-left: .35rem; padding: .05rem .5rem; border-radius: 999px; font-size: .78rem; font-weight: 600;
  vertical-align: .1em; color: var(--accent); background: var(--accent-soft); }
button.small { width: auto; min-height: 2.5rem; margin: 0; padding: .4rem .85rem; font-size: .92rem; }
button.danger { color: var(--danger); border-color: var(--danger-line); }
button.danger:hover { background: var(--danger-bg); }
.notice { margin: 1rem 0 0; padding: .75rem .9rem; border-radius: 10px; background: var(--accent-soft); border-left: 4px solid var(--accent); }
.links { margin-top: 1.5rem; }

/* The device page's code: typed as the device shows it (XXXX-XXXX), and repeated on its consent page (RFC 8628 §5.4). */
.hint { margin: 0 0 .4rem; color: var(--muted); font-size: .9rem; }
input.code-input { border-color: var(--field-line); text-align: center; text-transform: uppercase; font-size: 1.5rem; font-weight: 600;
  letter-spacing: .18em; font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; }
input.code-input[aria-invalid=true] { border-color: var(--danger); }
input.code-input::placeholder { color: var(--muted); opacity: .6; letter-spacing: .18em; }
.device-code { display: grid; justify-items: center; gap: .15rem; margin: 1rem 0 0; padding: .75rem; text-align: center;
  border: 1px dashed var(--field-line); border-radius: 12px; }
.device-code .code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 1.6rem;
  letter-spacing: .15em; }
/* The home page's ways in, one under the other. */
.home-links .button { margin-top: .75rem; }

/* Phones: the card starts near the top, where the thumb and the keyboard leave room. */
@media (max-width: 30rem) {
  body { place-items: start center; padding: 1.25rem .75rem; }
  .card { padding: 1.5rem 1.25rem; border-radius: 14px; }
  .brand { margin-bottom: 1rem; }
  .app-mark { width: 3rem; height: 3rem; font-size: 1.4rem; margin-bottom: .75rem; }
  .consent-title .app-name { font-size: 1.45rem; }
  .list-title { margin-top: 1.25rem; padding-top: 1rem; }
  ul.scopes li { padding: .5rem 0; }
}
@media (forced-colors: active) {
  .error, .note, .account, .notice, .badge { border: 1px solid CanvasText; }
  button.primary, .button.primary { border: 2px solid ButtonText; }
}
`;
