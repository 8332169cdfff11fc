import { documentHead, html, LOGO, raw, type Raw } from '../pages/html.js';

/**
 * The console's pages: the account pages' look (/assets/gatehouse.css) with
 * a wider card and tables (/assets/console.css), no script, so the pages'
 * CSP (default-src 'none') holds as it does for the sign-in pages.
 */
export const SECTIONS = [
  ['clients', 'Clients'], ['users', 'Users'], ['keys', 'Signing keys'], ['bots', 'Bots'], ['webhooks', 'Webhooks'], ['mail', 'E-mail'],
  ['groups', 'Groups'], ['roles', 'Roles'],
] as const;
export type Section = (typeof SECTIONS)[number][0] | 'home' | 'demo';

export interface Chrome {
  /** The signed-in administrator, shown in the header. */
  username?: string;
  section: Section;
  /** A confirmation after an action, or a secret shown once. */
  notice?: Raw | string;
  error?: string;
}

function nav(current: Section): Raw {
  return html`<nav class="console-nav" aria-label="Console sections"><ul>
${SECTIONS.map(([id, label]) => html`<li><a href="/admin/${id}"${current === id ? raw(' aria-current="page"') : ''}>${label}</a></li>`)}
</ul></nav>`;
}

export function consoleLayout(title: string, chrome: Chrome, body: Raw): string {
  const header = chrome.section === 'demo' ? '' : html`${nav(chrome.section)}${chrome.username ? html`<p class="console-who muted">Signed in as <strong>${chrome.username}</strong> · <a href="/account">Your account</a></p>` : ''}`.html;
  return `${documentHead(`${title} · Gatehouse`, { stylesheets: ['/assets/gatehouse.css', '/assets/console.css'] })}<body class="console">
<div class="shell">
<header class="brand">${LOGO.html}${chrome.section === 'demo' ? '<span>Gatehouse</span>' : '<a class="brand-link" href="/admin">Gatehouse admin</a>'}</header>
${header}
<main class="card">
${chrome.notice ? html`<div class="notice" role="status">${chrome.notice}</div>`.html : ''}
${chrome.error ? html`<p class="error" role="alert">${chrome.error}</p>`.html : ''}
${body.html}
</main>
</div>
</body>
</html>`;
}

/** Wide layout, tables that become stacked rows on a phone, and a command box that scrolls inside itself. */
export const consoleStylesheet = `
body.console .shell { max-width: 60rem; }
/* A wide command or table scrolls inside its own box, never the page: the grid track and its items may shrink below their content. */
body.console { place-items: start center; grid-template-columns: minmax(0, 1fr); }
body.console .shell, body.console .card { min-width: 0; }
.brand-link { color: inherit; text-decoration: none; }
/* The sign-in pages mark a described field as wrong; here the description is a hint. */
body.console input[aria-describedby], body.console textarea[aria-describedby] { border-color: var(--field-line); }
.console-nav ul { list-style: none; display: flex; flex-wrap: wrap; gap: .4rem; margin: 0 0 .75rem; padding: 0; justify-content: center; }
.console-nav a { display: inline-block; padding: .45rem .8rem; border-radius: 999px; border: 1px solid var(--line);
  background: var(--card); text-decoration: none; color: var(--fg); font-weight: 600; font-size: .95rem; }
.console-nav a[aria-current=page] { background: var(--accent); border-color: var(--accent); color: var(--accent-fg); }
.console-who { text-align: center; margin: 0 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
table.grid { width: 100%; border-collapse: collapse; margin: .5rem 0 0; font-size: .95rem; }
table.grid th, table.grid td { text-align: left; vertical-align: top; padding: .55rem .5rem; border-top: 1px solid var(--line); }
table.grid th { font-size: .85rem; color: var(--muted); font-weight: 600; border-top: 0; }
table.grid td form { display: inline-block; margin: 0 .25rem .25rem 0; }
.mono, pre.command { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: .88rem; }
pre.command { margin: .5rem 0; padding: .75rem .9rem; border-radius: 10px; background: var(--chip); border: 1px solid var(--line);
  overflow-x: auto; white-space: pre; max-width: 100%; }
.secret { display: block; margin-top: .35rem; padding: .4rem .6rem; border-radius: 8px; background: var(--card); border: 1px dashed var(--field-line);
  font-family: ui-monospace, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
fieldset { border: 1px solid var(--line); border-radius: 12px; padding: .25rem 1rem 1rem; margin: 1rem 0 0; }
legend { font-weight: 700; padding: 0 .35rem; }
textarea, select, input[type=url], input[type=number] { display: block; width: 100%; padding: .55rem .7rem; font: inherit; color: var(--fg);
  background: var(--field); border: 1px solid var(--field-line); border-radius: 10px; }
textarea { min-height: 5rem; }
.check { display: flex; gap: .5rem; align-items: center; font-weight: 500; margin-top: .75rem; }
.check input { width: 1.15rem; height: 1.15rem; }
.hint { color: var(--muted); font-size: .88rem; margin: .25rem 0 0; }
.row-actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1rem; }
.row-actions form { margin: 0; }
.button.small-link { display: inline-flex; width: auto; min-height: 2.4rem; margin: 0; padding: .3rem .85rem; font-size: .92rem; }
.button.small-link[aria-current=page] { background: var(--accent-soft); border-color: var(--accent); }
form[role=search] { display: flex; flex-wrap: wrap; align-items: end; gap: .5rem; }
form[role=search] .field { flex: 1 1 12rem; margin: 0; }
.status-failed { color: var(--danger); font-weight: 600; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(11rem, 1fr)); gap: .75rem; margin-top: 1rem; }
.cards a { display: block; padding: 1rem; border: 1px solid var(--line); border-radius: 12px; text-decoration: none; color: var(--fg); background: var(--chip); }
.cards a strong { display: block; font-size: 1.4rem; }
@media (max-width: 40rem) {
  table.grid thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.grid, table.grid tbody, table.grid tr, table.grid td { display: block; width: 100%; }
  table.grid tr { border-top: 1px solid var(--line); padding: .5rem 0; }
  table.grid td { border: 0; padding: .2rem 0; }
  table.grid td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .85rem; }
}
`;

/** "2025-03-01 14:05 UTC", as on the account page: the page runs no script and knows no time zone. */
export function when(ms: number | null | undefined): Raw | string {
  if (ms === null || ms === undefined) return '—';
  const iso = new Date(ms).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC</time>`;
}
