import type { FastifyInstance } from 'fastify';
import { randomToken } from '../../core/crypto.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { loginPage } from '../pages/pages.js';
import { homePage } from '../pages/home.js';
import { stylesheet } from '../pages/style.js';
import { AUTHORIZE_PATHS } from './oauth-routes.js';
import { signInWithLinks } from './federation-routes.js';
import { startSecondStep } from './second-step-routes.js';
import { withPasskeyLink } from '../pages/passkeys.js';
import { withSignupLink } from '../pages/signup.js';
import { formBody, paramsOf } from '../input.js';
import { clearSession, csrfCookie, cookieOptions, currentSession, logUndelivered, safeReturnTo, sessionCookie } from './session-cookie.js';

const LOGIN = 'login';
const LOGOUT = 'logout';

function str(params: Params, name: string): string | undefined {
  try {
    return single(params, name);
  } catch {
    return undefined;
  }
}

/** RFC 6749 §2.2: a client_id is printable ASCII; anything else names no client. */
const CLIENT_ID = /^[\x20-\x7e]{1,255}$/;

/**
 * The application a sign-in continues to, so the page can say "to continue
 * to <app>": only when return_to is one of our authorization requests naming
 * a registered client. Display only; nothing is decided from it.
 */
async function appName(gh: Gatehouse, returnTo: string): Promise<string | undefined> {
  const u = new URL(returnTo, 'http://return-to.invalid');
  if (!(AUTHORIZE_PATHS as readonly string[]).includes(u.pathname)) return undefined;
  const id = u.searchParams.get('client_id');
  if (!id || !CLIENT_ID.test(id)) return undefined;
  return (await gh.storage.clients.get(id))?.name;
}

export async function loginRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };

  app.get('/assets/gatehouse.css', async (_req, reply) =>
    reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(stylesheet));

  app.get('/', { config: page }, async (req, reply) => {
    const current = await currentSession(gh, req);
    if (!current) return sendPage(reply, 200, homePage({}));
    return sendPage(reply, 200, homePage({
      username: current.user.username, csrf: csrfToken(current.id, LOGOUT), chatUrl: gh.config.botApiUrl,
      admin: (await gh.console.isAdmin(current.user.id)) && !(await gh.console.isLocked(current.user.id)),
    }));
  });

  // Login CSRF: the form carries an HMAC of a random HttpOnly cookie (RFC 6749 §10.12).
  app.get('/login', { config: page, schema: { querystring: paramsOf('return_to', 'login_hint') } }, async (req, reply) => {
    let secret = req.cookies[csrfCookie(gh)];
    if (!secret || secret.length > 64) {
      secret = randomToken();
      reply.setCookie(csrfCookie(gh), secret, cookieOptions(gh));
    }
    const q = req.query as Params;
    const returnTo = safeReturnTo(gh, str(q, 'return_to'));
    // Passkeys sign in without a password on their own page (src/http/auth/passkey-routes.ts).
    // OpenID Connect Core §3.1.2.1 login_hint (passed on by the authorization endpoint): fills the username field only.
    const hint = str(q, 'login_hint')?.slice(0, 64);
    const page = loginPage({ csrf: csrfToken(secret, LOGIN), returnTo, ...(hint ? { username: hint } : {}), appName: await appName(gh, returnTo), providers: signInWithLinks(gh, returnTo) });
    // Sign-up linked only when it is open (with `invite`, an invitation link leads there).
    const linked = withPasskeyLink(page, returnTo);
    return sendPage(reply, 200, gh.signup.mode === 'open' ? withSignupLink(linked) : linked);
  });

  app.post('/login', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'username', 'password', 'return_to')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the sign-in form must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const returnTo = safeReturnTo(gh, str(body, 'return_to'));
    const secret = req.cookies[csrfCookie(gh)];
    if (!csrfValid(secret, LOGIN, body.csrf_token)) {
      return sendErrorPage(reply, 403, 'Request expired', 'This sign-in form has expired. Go back and reload the page.');
    }
    const username = str(body, 'username') ?? '';
    const password = str(body, 'password') ?? '';
    const again = async (status: number, error: string) =>
      sendPage(reply, status, loginPage({ csrf: csrfToken(secret!, LOGIN), returnTo, username: username.slice(0, 64), error, appName: await appName(gh, returnTo), providers: signInWithLinks(gh, returnTo) }));
    if (!username || !password || username.length > 256 || password.length > 1024) return again(400, 'Enter your username and password.');
    const outcome = await gh.login.attempt(username, password, req.ip, { session: true });
    if (!outcome.ok) {
      if (outcome.reason === 'locked') {
        reply.header('retry-after', String(outcome.retryAfterSeconds));
        return again(429, outcome.busy ? 'Other sign-in attempts are being checked right now. Try again in a moment.'
          : 'Too many failed sign-in attempts. Wait 15 minutes and try again.');
      }
      // An administrator locked the account (admin console, Users).
      if (outcome.reason === 'disabled') return again(403, 'This account is locked. Ask an administrator to unlock it.');
      return again(401, 'Incorrect username or password.');
    }
    // A second factor: no session until it passes (src/http/auth/second-step-routes.ts).
    if (outcome.secondFactor) return startSecondStep(gh, req, reply, outcome.user, returnTo);
    // Single sign-on: the same person keeps the session's sid; someone else's previous session ends (src/core/oidc/sso.ts).
    const { id, ended } = await gh.sso.signIn(req.cookies[sessionCookie(gh)], outcome.user.id, req.headers['user-agent'], { username: outcome.user.username, ip: req.ip }, ['pwd']);
    logUndelivered(req, ended);
    reply.setCookie(sessionCookie(gh), id, cookieOptions(gh, Math.floor(gh.sessions.ttlMs / 1000)));
    return reply.redirect(returnTo, 303);
  });

  app.post('/logout', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'return_to')) } }, async (req, reply) => {
    const current = await currentSession(gh, req);
    const body = (isForm(req) ? req.body ?? {} : {}) as Params;
    if (current) {
      if (!csrfValid(current.id, LOGOUT, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'Reload the page and sign out again.');
      // Single logout: every application this session signed in to is told (OpenID Connect Back-Channel Logout 1.0).
      logUndelivered(req, await gh.sso.signOut(current.session));
    }
    clearSession(gh, reply);
    return reply.redirect(safeReturnTo(gh, str(body, 'return_to')), 303);
  });
}
