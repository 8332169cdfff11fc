import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfidentialClient, TokenError, discover, randomString, s256, type Tokens } from './oauth-client.js';
import { deniedPage, homePage, implicitCallbackPage, implicitPage, messagePage } from './pages.js';

export interface WebsiteOptions {
  /** Gatehouse's issuer ({auth_url}) and resource server ({api_url}). */
  issuer: string;
  apiUrl: string;
  /** The confidential client for the authorization code flow. */
  clientId: string;
  clientSecret: string;
  /** The public client for the implicit-flow page. */
  implicitClientId: string;
  scope?: string;
  port?: number;
  host?: string;
  /** For tests that move time; the site otherwise uses the wall clock. */
  now?: () => number;
}

/** Refresh this long before the access token expires (spec §8: a 30-second margin). */
export const REFRESH_MARGIN_MS = 30_000;
const SESSION_COOKIE = 'site_session';

interface Session {
  /** The authorization request in flight: `state` and the PKCE verifier (RFC 7636 §4.1). */
  pending?: { state: string; verifier: string };
  tokens?: Tokens;
  /** One refresh at a time: two concurrent ones would replay the rotated token and revoke the grant. */
  refreshing?: Promise<Tokens | undefined>;
}

const PUBLIC = new URL('./public/', import.meta.url);
const STATIC: Record<string, string> = {
  '/app.js': 'text/javascript', '/implicit.js': 'text/javascript', '/implicit-callback.js': 'text/javascript', '/site.css': 'text/css',
};

/**
 * The sample website: a client of Gatehouse as spec §4 rules 1–2 describe.
 * Its server runs the authorization code flow with PKCE, keeps the refresh
 * token, and hands only the access token to its browser side, which calls
 * {api_url}/user. A second page does the implicit flow in the browser.
 */
export async function startWebsite(opts: WebsiteOptions): Promise<{ url: string; close(): Promise<void> }> {
  const now = opts.now ?? Date.now;
  const meta = await discover(opts.issuer);
  const client = new ConfidentialClient(meta, opts, now);
  const sessions = new Map<string, Session>();
  const scope = opts.scope ?? 'user';
  let url = '';

  const csp = `default-src 'self'; connect-src 'self' ${opts.apiUrl}; img-src 'self'; frame-ancestors 'none'; base-uri 'none'`;
  const send = (res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': type, 'cache-control': 'no-store', 'content-security-policy': csp,
      // The callback URL carries the code: it must not leak through Referer (RFC 9700 §4.2.4).
      'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff', ...headers,
    }).end(body);
  };
  const html = (res: ServerResponse, status: number, body: string) => send(res, status, 'text/html; charset=utf-8', body);
  const json = (res: ServerResponse, status: number, body: unknown) => send(res, status, 'application/json', JSON.stringify(body));
  const redirect = (res: ServerResponse, location: string, headers: Record<string, string> = {}) => {
    res.writeHead(303, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...headers }).end();
  };

  const sessionOf = (req: IncomingMessage): [string, Session] | undefined => {
    const id = /(?:^|;\s*)site_session=([A-Za-z0-9_-]+)/.exec(req.headers.cookie ?? '')?.[1];
    const s = id ? sessions.get(id) : undefined;
    return id && s ? [id, s] : undefined;
  };
  const newSession = (s: Session): string => {
    const id = randomString();
    // An in-memory sample: bound it, oldest out, so abandoned sign-ins cannot fill memory.
    if (sessions.size >= 10_000) sessions.delete(sessions.keys().next().value!);
    sessions.set(id, s);
    return `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax`;
  };

  /** The access token, refreshed on the server when it has 30 seconds or less to live. */
  const accessToken = async (s: Session): Promise<Tokens | undefined> => {
    const t = s.tokens;
    if (!t) return undefined;
    if (t.expiresAt - now() > REFRESH_MARGIN_MS) return t;
    if (!t.refreshToken) return t.expiresAt > now() ? t : undefined;
    s.refreshing ??= client.refresh(t.refreshToken).then(
      (fresh) => (s.tokens = fresh),
      (e: unknown) => {
        // invalid_grant: the grant was revoked or expired, so the user must sign in again.
        if (e instanceof TokenError) s.tokens = undefined;
        return e instanceof TokenError ? undefined : Promise.reject(e);
      },
    ).finally(() => (s.refreshing = undefined));
    return s.refreshing;
  };

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, q: URLSearchParams) => Promise<void>> = {
    'GET /': async (req, res) => html(res, 200, homePage({ signedIn: Boolean(sessionOf(req)?.[1].tokens), apiUrl: opts.apiUrl })),

    // Rule 1.1: send the browser to the authorization endpoint, with state and a PKCE challenge.
    'GET /login': async (_req, res) => {
      const pending = { state: randomString(), verifier: randomString() };
      const cookie = newSession({ pending });
      const q = new URLSearchParams({
        response_type: 'code', client_id: opts.clientId, redirect_uri: `${url}/callback`, scope, state: pending.state,
        code_challenge: s256(pending.verifier), code_challenge_method: 'S256',
      });
      redirect(res, `${meta.authorization_endpoint}?${q}`, { 'set-cookie': cookie });
    },

    // Rules 1.3–1.5: back with a code (or a refusal); exchange it on the server.
    'GET /callback': async (req, res, q) => {
      const s = sessionOf(req)?.[1];
      const pending = s?.pending;
      if (!s || !pending || q.get('state') !== pending.state) return html(res, 400, messagePage('Sign-in failed', 'This sign-in link is not the one this browser started. Try again.'));
      s.pending = undefined;
      // RFC 9207: the response must come from the server we sent the user to.
      if (q.has('iss') && q.get('iss') !== meta.issuer) return html(res, 400, messagePage('Sign-in failed', 'The answer came from another server.'));
      const error = q.get('error');
      if (error) return html(res, 403, deniedPage(error, q.get('error_description')));
      try {
        s.tokens = await client.exchangeCode(q.get('code') ?? '', `${url}/callback`, pending.verifier);
      } catch (e) {
        if (!(e instanceof TokenError)) throw e;
        return html(res, 400, messagePage('Sign-in failed', e.message));
      }
      redirect(res, '/');
    },

    // Rule 1.6: the browser side gets the access token, never the refresh token.
    'GET /session/token': async (req, res) => {
      const s = sessionOf(req)?.[1];
      const t = s && (await accessToken(s));
      if (!t) return json(res, 401, { error: 'signed_out' });
      json(res, 200, { access_token: t.accessToken, expires_at: t.expiresAt, refresh_at: t.expiresAt - REFRESH_MARGIN_MS, scope: t.scope });
    },

    'POST /logout': async (req, res) => {
      const found = sessionOf(req);
      if (found) {
        sessions.delete(found[0]);
        const refresh = found[1].tokens?.refreshToken;
        if (refresh) await client.revoke(refresh).catch(() => {});
      }
      redirect(res, '/', { 'set-cookie': `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0` });
    },

    // Rule 2: the implicit flow, entirely in the browser.
    'GET /implicit': async (_req, res) => html(res, 200, implicitPage({
      authorize: meta.authorization_endpoint, clientId: opts.implicitClientId, redirectUri: `${url}/implicit/callback`, scope, apiUrl: opts.apiUrl,
    })),
    // Rule 2.3: the browser asks for the redirection URI without the fragment; the page's script reads it.
    'GET /implicit/callback': async (_req, res) => html(res, 200, implicitCallbackPage({ apiUrl: opts.apiUrl, issuer: meta.issuer })),
  };

  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://site');
    const route = routes[`${req.method} ${u.pathname}`];
    const handle = async () => {
      if (route) return route(req, res, u.searchParams);
      const type = req.method === 'GET' ? STATIC[u.pathname] : undefined;
      if (type) return send(res, 200, `${type}; charset=utf-8`, await readFile(new URL(`.${u.pathname}`, PUBLIC), 'utf8'));
      html(res, 404, messagePage('Not found', 'There is no page here.'));
    };
    handle().catch((e: unknown) => {
      console.error(e);
      if (!res.headersSent) html(res, 500, messagePage('Something went wrong', 'The sample site failed; see its console.'));
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 3000, opts.host ?? '127.0.0.1', resolve));
  url = `http://${opts.host ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
