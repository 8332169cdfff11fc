/** Served at /assets/gatehouse.css so the pages' CSP can forbid inline styles. */
export const stylesheet = `
:root { color-scheme: light dark; --fg: #1c2330; --muted: #5b6576; --bg: #f3f5f8; --card: #fff; --line: #d5dbe3;
  --accent: #2456d6; --accent-fg: #fff; --danger: #b42318; --danger-bg: #fef3f2; --focus: #f59e0b; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8ecf2; --muted: #a3adbd; --bg: #11151c; --card: #1a2029; --line: #333c4a;
  --accent: #5b8cff; --accent-fg: #0b1020; --danger: #ff8a80; --danger-bg: #2a1717; } }
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: var(--bg); color: var(--fg);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; padding: 1rem; }
.card { width: 100%; max-width: 26rem; background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: 2rem; box-shadow: 0 8px 24px rgb(0 0 0 / 0.06); }
.brand { margin: 0 0 1rem; font-weight: 700; letter-spacing: .02em; color: var(--accent); }
h1 { font-size: 1.35rem; margin: 0 0 .5rem; }
p { margin: .5rem 0; }
.muted { color: var(--muted); font-size: .95rem; }
label { display: block; font-weight: 600; margin: 1rem 0 .3rem; }
input[type=text], input[type=password] { width: 100%; padding: .65rem .75rem; font: inherit; color: inherit;
  background: transparent; border: 1px solid var(--line); border-radius: 8px; }
button { font: inherit; font-weight: 600; padding: .7rem 1rem; border-radius: 8px; border: 1px solid var(--line);
  background: transparent; color: inherit; cursor: pointer; width: 100%; margin-top: 1.25rem; }
button.primary { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.actions { display: flex; gap: .75rem; }
.actions button { margin-top: 1.5rem; }
.error { background: var(--danger-bg); color: var(--danger); border-radius: 8px; padding: .6rem .8rem; margin: 1rem 0 0; }
ul.scopes { padding-left: 1.2rem; margin: .75rem 0; }
ul.scopes li { margin: .3rem 0; }
code { font-size: .9em; }
`;
