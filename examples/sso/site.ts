import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { LogoutTokenVerifier, type VerifiedLogout } from './logout-token.js';
import { errorPage, signedInPage, signedOutPage, type SiteLook } from './pages.js';

export interface SsoSiteOptions extends SiteLook {
  /** Gatehouse's issuer ({auth_url}). */
  issuer: string;
  /**
   * Registers the site once its address is known (port 0 picks one): called
   * with the site's base URL, answers its client credentials.
   */
  register(siteUrl: string): Promise<{ clientId: string; clientSecret: string }>;
  port?: number;
  host?: string;
  /** Other sites to link to. */
  peers?: () => { title: string; url: string }[];
}

export interface SsoSite {
  url: string;
  clientId: string;
  /** Back-channel logouts received and verified, oldest first. */
  logouts: VerifiedLogout[];
  /** Sessions signed in at this site right now. */
  sessionCount(): number;
  close(): Promise<void>;
}

interface SiteSession {
  sub: string;
  sid: string | undefined;
  name: string;
  email: string | undefined;
  authTime: number | undefined;
  idToken: string;
  accessToken: string;
  refreshToken: string | undefined;
}

const SCOPE = 'openid profile email';
const random = () => randomBytes(32).toString('base64url');

/**
 * A website that signs people in with Gatehouse through openid-client, an
 * OpenID Certified relying-party library: discovery, code flow with PKCE,
 * state and nonce, ID token validated (signature against the discovered
 * keys), profile from UserInfo. Sign-out is single logout: the site ends its
 * own session and sends the browser to Gatehouse's end-session endpoint;
 * Gatehouse then tells every other site by back-channel, and this site takes
 * such notices at POST /backchannel-logout.
 */
export async function startSsoSite(opts: SsoSiteOptions): Promise<SsoSite> {
  const look: SiteLook = { title: opts.title, accent: opts.accent };
  // Cookies do not tell ports apart: each site on 127.0.0.1 needs its own cookie names.
  const cookieName = `sso_${opts.title.toLowerCase().replace(/[^a-z0-9]+/g, '_')}`;
  const sessions = new Map<string, SiteSession>();
  const pending = new Map<string, { state: string; nonce: string; verifier: string }>();
  const logouts: VerifiedLogout[] = [];
  let url = '';
  let config: oidc.Configuration;
  let verifier: LogoutTokenVerifier;
  let clientId = '';

  const cookie = (req: IncomingMessage, name: string) =>
    new RegExp(`(?:^|;\\s*)${name}=([A-Za-z0-9_-]+)`).exec(req.headers.cookie ?? '')?.[1];
  const setCookie = (name: string, value: string, maxAge?: number) =>
    `${name}=${value}; Path=/; HttpOnly; SameSite=Lax${maxAge !== undefined ? `; Max-Age=${maxAge}` : ''}`;
  const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string | string[]> = {}): void => {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' " + opts.issuer + "; frame-ancestors 'none'", ...headers,
    }).end(body);
  };
  const redirect = (res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void => {
    res.writeHead(303, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...headers }).end();
  };
  const current = (req: IncomingMessage) => {
    const id = cookie(req, cookieName);
    const s = id ? sessions.get(id) : undefined;
    return id && s ? { id, s } : undefined;
  };
  const readBody = (req: IncomingMessage) => new Promise<string>((resolve, reject) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
      if (body.length > 16_384) req.destroy(new Error('body too large'));
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });

  const home = (res: ServerResponse, s: SiteSession | undefined, notice?: string) => {
    const peers = opts.peers?.() ?? [];
    if (!s) return send(res, 200, signedOutPage(look, peers, notice));
    send(res, 200, signedInPage(look, {
      name: s.name, sub: s.sub, sid: s.sid, authTime: s.authTime, email: s.email, account: `${opts.issuer}/account`, peers, notice,
    }));
  };

  /** The profile from the ID token and UserInfo (OpenID Connect Core §5.3). */
  const sessionFrom = async (tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, previous?: SiteSession): Promise<SiteSession> => {
    const claims = tokens.claims()!;
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    return {
      sub: claims.sub, sid: typeof claims.sid === 'string' ? claims.sid : previous?.sid,
      name: String(info.name ?? info.preferred_username ?? claims.sub), email: info.email,
      authTime: typeof claims.auth_time === 'number' ? claims.auth_time : previous?.authTime,
      idToken: tokens.id_token ?? previous!.idToken, accessToken: tokens.access_token, refreshToken: tokens.refresh_token ?? previous?.refreshToken,
    };
  };

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, u: URL) => Promise<void>> = {
    'GET /': async (req, res) => home(res, current(req)?.s),

    'GET /login': async (_req, res) => {
      const p = { state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier() };
      const id = random();
      if (pending.size > 10_000) pending.delete(pending.keys().next().value!);
      pending.set(id, p);
      const to = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${url}/callback`, scope: SCOPE, state: p.state, nonce: p.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(p.verifier), code_challenge_method: 'S256',
      });
      redirect(res, to.href, { 'set-cookie': setCookie(`${cookieName}_pending`, id, 600) });
    },

    'GET /callback': async (req, res, u) => {
      const id = cookie(req, `${cookieName}_pending`);
      const p = id ? pending.get(id) : undefined;
      if (!id || !p) return send(res, 400, errorPage(look, 'This sign-in was not started in this browser. Try again.'));
      pending.delete(id);
      let tokens;
      try {
        // Checks state, iss (RFC 9207), the ID token (signature, iss, aud, exp, nonce, at_hash) and PKCE.
        tokens = await oidc.authorizationCodeGrant(config, u, { pkceCodeVerifier: p.verifier, expectedState: p.state, expectedNonce: p.nonce, idTokenExpected: true });
      } catch (e) {
        const err = e as Error & { error?: string };
        return send(res, 400, errorPage(look, err.error === 'access_denied' ? 'You did not allow this site to sign you in.' : `Gatehouse's answer was refused: ${err.message}`));
      }
      const sessionId = random();
      sessions.set(sessionId, await sessionFrom(tokens));
      redirect(res, '/', { 'set-cookie': [setCookie(cookieName, sessionId), setCookie(`${cookieName}_pending`, '', 0)] });
    },

    // The refresh token at work: after "Remove access" on the account page it is refused.
    'POST /refresh': async (req, res) => {
      const found = current(req);
      if (!found?.s.refreshToken) return redirect(res, '/');
      try {
        const tokens = await oidc.refreshTokenGrant(config, found.s.refreshToken);
        sessions.set(found.id, await sessionFrom(tokens, found.s));
        return home(res, sessions.get(found.id), 'Profile refreshed with a new access token.');
      } catch (e) {
        if (!(e instanceof oidc.ResponseBodyError) || e.error !== 'invalid_grant') throw e;
        sessions.delete(found.id);
        return send(res, 200, signedOutPage(look, opts.peers?.() ?? [], 'Gatehouse no longer lets this site act for you (access was removed or you signed out). Sign in again.'),
          { 'set-cookie': setCookie(cookieName, '', 0) });
      }
    },

    // RP-initiated logout: end our session, then Gatehouse's, which tells the other sites.
    'POST /logout': async (req, res) => {
      const found = current(req);
      if (!found) return redirect(res, '/');
      sessions.delete(found.id);
      const to = oidc.buildEndSessionUrl(config, { id_token_hint: found.s.idToken, post_logout_redirect_uri: `${url}/signed-out` });
      redirect(res, to.href, { 'set-cookie': setCookie(cookieName, '', 0) });
    },

    'GET /signed-out': async (_req, res) => home(res, undefined, 'You signed out of Gatehouse and of every site you used it with.'),

    // OpenID Connect Back-Channel Logout 1.0 §2.5, §2.8: 200 when done, 400 with an error otherwise.
    'POST /backchannel-logout': async (req, res) => {
      const token = new URLSearchParams(await readBody(req)).get('logout_token');
      let who: VerifiedLogout;
      try {
        if (!token) throw new Error('missing logout_token');
        who = await verifier.verify(token);
      } catch (e) {
        res.writeHead(400, { 'content-type': 'application/json', 'cache-control': 'no-store' })
          .end(JSON.stringify({ error: 'invalid_request', error_description: (e as Error).message }));
        return;
      }
      for (const [id, s] of sessions) {
        if (who.sid ? s.sid === who.sid : s.sub === who.sub) sessions.delete(id);
      }
      logouts.push(who);
      res.writeHead(200, { 'cache-control': 'no-store' }).end();
    },
  };

  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', url || 'http://site');
    const route = routes[`${req.method} ${u.pathname}`];
    (route ? route(req, res, u) : Promise.resolve(send(res, 404, errorPage(look, 'There is no page here.')))).catch((e: unknown) => {
      console.error(e);
      if (!res.headersSent) send(res, 500, errorPage(look, 'The example site failed; see its console.'));
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', resolve));
  url = `http://${opts.host ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  try {
    const creds = await opts.register(url);
    clientId = creds.clientId;
    const insecure = new URL(opts.issuer).protocol === 'http:';
    config = await oidc.discovery(new URL(opts.issuer), creds.clientId, creds.clientSecret, oidc.ClientSecretBasic(), {
      // http only for a Gatehouse on this machine; ID token signatures checked against the discovered jwks_uri.
      execute: insecure ? [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] : [oidc.enableNonRepudiationChecks],
    });
    verifier = new LogoutTokenVerifier(config.serverMetadata().issuer, config.serverMetadata().jwks_uri!, creds.clientId);
  } catch (e) {
    await close();
    throw e;
  }
  return { url, clientId, logouts, sessionCount: () => sessions.size, close };
}
