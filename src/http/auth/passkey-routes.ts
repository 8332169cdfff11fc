import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSKEY_NAME_MAX, PasskeyError } from '../../core/mfa/passkeys.js';
import { single, type Params } from '../../core/params.js';
import { csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage } from '../common.js';
import { formBody, paramsOf } from '../input.js';
import { PASSKEY_SCRIPT, PASSKEY_SCRIPT_PATH, passkeyPage } from '../pages/passkeys.js';
import { cookieOptions, currentSession, logUndelivered, safeReturnTo, sessionCookie } from './session-cookie.js';
import { pendingCookie, sendScriptedPage } from './second-step-routes.js';
import { recentAuthenticationJson } from './reauth.js';

const SECURITY = 'security';
/** The challenge of one WebAuthn ceremony (__Host- under https, like the session cookie). */
const challengeCookie = (gh: Gatehouse) => (gh.oauth.issuer.startsWith('https:') ? '__Host-gh_webauthn' : 'gh_webauthn');

const isJson = (req: FastifyRequest) => /^application\/json\b/i.test(req.headers['content-type'] ?? '');
const text = (v: unknown, max: number) => (typeof v === 'string' && v.length <= max ? v : undefined);

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

/**
 * Passkeys (docs/security.md): registration on the security page and sign-in
 * without a password from the login page. The browser side is
 * /assets/passkeys.js; these answer JSON `{error, error_description}` on failure.
 */
export async function passkeyRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };
  const { passkeys, factors } = gh.mfa;
  const fail = (reply: FastifyReply, status: number, description: string) =>
    reply.code(status).header('cache-control', 'no-store').send({ error: status === 403 ? 'access_denied' : 'invalid_request', error_description: description });

  app.get(PASSKEY_SCRIPT_PATH, async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(PASSKEY_SCRIPT));

  /** Signed in, JSON, CSRF token of the security page. */
  const signedIn = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!isJson(req)) {
      sendErrorPage(reply, 400, 'Passkeys need JavaScript', 'Adding a passkey needs JavaScript in your browser.');
      return undefined;
    }
    const current = await currentSession(gh, req);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!current) {
      fail(reply, 401, 'sign in first');
      return undefined;
    }
    if (!csrfValid(current.id, SECURITY, body.csrf_token)) {
      fail(reply, 403, 'this page has expired; reload it');
      return undefined;
    }
    // Sudo mode: a new passkey is a new way in (src/http/auth/reauth.ts).
    if (!recentAuthenticationJson(gh, reply, current, '/account/security')) return undefined;
    return { current, body };
  };

  app.post('/account/security/passkeys/options', { config: page }, async (req, reply) => {
    const ok = await signedIn(req, reply);
    if (!ok) return reply;
    const { options, cookie } = await passkeys.registrationOptions(ok.current.user);
    reply.setCookie(challengeCookie(gh), cookie, cookieOptions(gh, 300));
    return reply.header('cache-control', 'no-store').send({ options });
  });

  app.post('/account/security/passkeys', { config: page }, async (req, reply) => {
    const ok = await signedIn(req, reply);
    if (!ok) return reply;
    const name = text(ok.body.name, PASSKEY_NAME_MAX)?.trim();
    if (!name || /[\x00-\x1f\x7f]/.test(name)) return fail(reply, 400, `name the passkey (1 to ${PASSKEY_NAME_MAX} characters)`);
    if (typeof ok.body.response !== 'object' || ok.body.response === null) return fail(reply, 400, 'response is missing');
    try {
      await passkeys.register(ok.current.user, req.cookies[challengeCookie(gh)], name, ok.body.response);
    } catch (e) {
      if (e instanceof PasskeyError) return fail(reply, 400, e.message);
      throw e;
    } finally {
      reply.clearCookie(challengeCookie(gh), cookieOptions(gh));
    }
    return reply.header('cache-control', 'no-store').send({ ok: true });
  });

  app.post('/account/security/passkeys/remove', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'id', 'password', 'code')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the request must be sent as a form');
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect('/login?return_to=%2Faccount%2Fsecurity', 303);
    const body = (req.body ?? {}) as Params;
    if (!csrfValid(current.id, SECURITY, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'Reload the security page and try again.');
    const id = field(body, 'id');
    const password = field(body, 'password');
    const code = field(body, 'code')?.trim();
    if (!id || id.length > 1024) return sendErrorPage(reply, 400, 'Bad request', 'Choose a passkey to remove.');
    if ((!password && !code) || (password?.length ?? 0) > 1024 || (code?.length ?? 0) > 64) {
      return sendErrorPage(reply, 400, 'Password needed', 'Enter your password (or a code) to remove a passkey.');
    }
    // Removing always asks for the proof, however recent the last one (which the proof renews).
    const check = await gh.reauth.prove(current.session, current.user, { password, code }, req.ip);
    if (!check.ok) {
      if (check.reason === 'locked') reply.header('retry-after', String(check.retryAfterSeconds));
      return sendErrorPage(reply, check.reason === 'locked' ? 429 : 401, 'Not removed', 'That password or code is not right. Nothing was removed.');
    }
    if (!(await factors.removePasskey(current.user.id, id))) return sendErrorPage(reply, 404, 'Not found', 'That passkey is not on your account.');
    if (!(await factors.hasCodeFactor(current.user.id))) await factors.removeRecoveryCodes(current.user.id);
    return reply.redirect('/account/security?done=passkey-removed', 303);
  });

  app.get('/login/passkey', { config: page, schema: { querystring: paramsOf('return_to') } }, async (req, reply) => {
    const q = req.query as Params;
    return sendScriptedPage(reply, 200, passkeyPage(safeReturnTo(gh, field(q, 'return_to'))));
  });

  app.post('/login/passkey/options', async (req, reply) => {
    if (!isJson(req)) return fail(reply, 400, 'send JSON');
    const { options, cookie } = await passkeys.signInOptions();
    reply.setCookie(challengeCookie(gh), cookie, cookieOptions(gh, 300));
    return reply.header('cache-control', 'no-store').send({ options });
  });

  /** A passkey with user verification is a whole sign-in: no password, no second step. */
  app.post('/login/passkey', { config: page }, async (req, reply) => {
    if (!isJson(req)) return sendErrorPage(reply, 400, 'Passkeys need JavaScript', 'Signing in with a passkey needs JavaScript in your browser.');
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body.response !== 'object' || body.response === null) return fail(reply, 400, 'response is missing');
    let user;
    try {
      user = await passkeys.signIn(req.cookies[challengeCookie(gh)], body.response);
    } catch (e) {
      if (e instanceof PasskeyError) return fail(reply, 400, e.message);
      throw e;
    } finally {
      reply.clearCookie(challengeCookie(gh), cookieOptions(gh));
    }
    if (await gh.console.isLocked(user.id)) return fail(reply, 403, 'This account is locked. Ask an administrator to unlock it.');
    const { id, ended } = await gh.sso.signIn(req.cookies[sessionCookie(gh)], user.id, req.headers['user-agent'], { username: user.username, ip: req.ip }, ['hwk']);
    logUndelivered(req, ended);
    reply.setCookie(sessionCookie(gh), id, cookieOptions(gh, Math.floor(gh.sessions.ttlMs / 1000)));
    reply.clearCookie(pendingCookie(gh), cookieOptions(gh));
    return reply.header('cache-control', 'no-store').send({ redirect: safeReturnTo(gh, text(body.return_to, 2048)) });
  });
}
