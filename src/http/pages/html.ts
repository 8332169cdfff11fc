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

export function layout(title: string, body: Raw): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · Gatehouse</title>
<link rel="stylesheet" href="/assets/gatehouse.css">
</head>
<body>
<main class="card">
<p class="brand" aria-hidden="true">Gatehouse</p>
${body.html}
</main>
</body>
</html>`;
}
