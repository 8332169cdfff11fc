/** Escapes text for HTML element content and double-quoted attributes. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A tagged template whose interpolations are escaped unless wrapped in `raw`. */
export class Raw {
  constructor(readonly html: string) {}
}
export const raw = (html: string) => new Raw(html);

export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0]!;
  values.forEach((v, i) => {
    const part = Array.isArray(v) ? v.map((x) => (x instanceof Raw ? x.html : esc(x))).join('') : v instanceof Raw ? v.html : esc(v);
    out += part + strings[i + 1]!;
  });
  return new Raw(out);
}

/**
 * The gate mark beside the name. Inline SVG is markup, not a script or a
 * style, so the pages' CSP (default-src 'none') still holds.
 */
export const LOGO = raw(`<svg class="logo" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
<path fill="currentColor" d="M4 2h3v2h3V2h4v2h3V2h3v20h-6v-5a2 2 0 0 0-4 0v5H4V2Z"/></svg>`);

/**
 * The document start every page shares: no referrer leaves a page (RFC 9700
 * §4.2.4), a phone-width viewport, and only same-origin stylesheets and
 * scripts (the pages' CSP has no inline script or style).
 */
export function documentHead(title: string, opts: { stylesheets: string[]; scripts?: string[]; colorScheme?: boolean }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
${opts.colorScheme === false ? '' : '<meta name="color-scheme" content="light dark">\n'}<title>${esc(title)}</title>
${opts.stylesheets.map((href) => `<link rel="stylesheet" href="${esc(href)}">\n`).join('')}${(opts.scripts ?? []).map((src) => `<script src="${esc(src)}" defer></script>\n`).join('')}</head>
`;
}

export function layout(title: string, body: Raw): string {
  return `${documentHead(`${title} · Gatehouse`, { stylesheets: ['/assets/gatehouse.css'] })}<body>
<div class="shell">
<header class="brand">${LOGO.html}<span>Gatehouse</span></header>
<main class="card">
${body.html}
</main>
</div>
</body>
</html>`;
}
