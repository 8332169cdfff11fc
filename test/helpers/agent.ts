/**
 * A small user agent for driving the login and consent pages over real HTTP
 * without a browser: keeps cookies, never follows redirects on its own, and
 * reads forms out of the returned HTML.
 */
export class Agent {
  private cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  private absorb(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      const expired = attrs.some((a) => /max-age=0/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const url = new URL(path, this.base);
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.absorb(res);
    return res;
  }

  get(path: string): Promise<Response> {
    return this.request(path);
  }

  post(path: string, fields: Record<string, string>): Promise<Response> {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** Signs in through the login page; returns the redirect that follows. */
  async login(username: string, password: string, returnTo = '/'): Promise<Response> {
    const page = await this.get(`/login?return_to=${encodeURIComponent(returnTo)}`);
    const form = parseForm(await page.text());
    return this.post('/login', { ...form.fields, username, password });
  }
}

/** Fields of the first form on a page, hidden inputs included, and its action. */
export function parseForm(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no form on page:\n${html.slice(0, 500)}`);
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input[^>]*type="hidden"[^>]*>/gi)) {
    const name = /name="([^"]*)"/.exec(m[0])?.[1];
    const value = /value="([^"]*)"/.exec(m[0])?.[1] ?? '';
    if (name) fields[name] = decodeEntities(value);
  }
  return { action: decodeEntities(form[1]!), fields };
}

function decodeEntities(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}
