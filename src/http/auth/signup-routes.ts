import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { SignupRefused } from '../../core/account/signup.js';
import { randomToken } from '../../core/crypto.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage } from '../common.js';
import { PAGE_HEADERS } from '../errors.js';
import { formBody, paramsOf } from '../input.js';
import { POW_CSP, POW_SCRIPT_PATH, signupPage, type SignupView } from '../pages/signup.js';
import { cookieOptions, csrfCookie, logUndelivered, sessionCookie } from './session-cookie.js';

const SIGNUP = 'signup';
const script = readFileSync(new URL('./static/pow.js', import.meta.url), 'utf8');

function str(params: Params, name: string): string | undefined {
  try {
    return single(params, name);
  } catch {
    return undefined;
  }
}

/**
 * GET/POST /signup (GATEHOUSE_SIGNUP, src/core/account/signup.ts): username,
 * e-mail and password, a proof of work, and with `invite` an invitation link.
 * The form's CSRF token is an HMAC of a random HttpOnly cookie, as the login
 * form's (RFC 6749 §10.12); the new person is signed in as at the login page.
 */
export async function signupRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };

  app.get(POW_SCRIPT_PATH, async (_req, reply) =>
    reply.header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'no-cache').header('x-content-type-options', 'nosniff').send(script));

  const show = async (reply: FastifyReply, status: number, secret: string, v: Omit<SignupView, 'csrf' | 'challenge' | 'mailEnabled'>) =>
    reply.code(status).headers({ ...PAGE_HEADERS, 'content-security-policy': POW_CSP })
      .send(signupPage({ ...v, csrf: csrfToken(secret, SIGNUP), challenge: await gh.proofOfWork.challenge(), mailEnabled: gh.mailer.enabled }));

  /** Off, or invite-only without a usable invitation: the page that says so instead of the form. */
  const closed = async (reply: FastifyReply, invitation: string | undefined) => {
    if (gh.signup.mode === 'off') return sendErrorPage(reply, 404, 'Sign-up is off', 'This server does not let people create accounts themselves. Ask an administrator for an account.');
    if (gh.signup.mode === 'invite' && !(await gh.signup.invitation(invitation))) {
      return invitation
        ? sendErrorPage(reply, 403, 'Invitation not valid', 'This invitation link was used already or has expired. Ask for a new one.')
        : sendErrorPage(reply, 403, 'Invitation needed', 'Sign-up on this server is by invitation only. Ask an administrator for an invitation.');
    }
    return undefined;
  };

  app.get('/signup', { config: page, schema: { querystring: paramsOf('invitation') } }, async (req, reply) => {
    const invitation = str(req.query as Params, 'invitation')?.slice(0, 128);
    const refused = await closed(reply, invitation);
    if (refused) return refused;
    let secret = req.cookies[csrfCookie(gh)];
    if (!secret || secret.length > 64) {
      secret = randomToken();
      reply.setCookie(csrfCookie(gh), secret, cookieOptions(gh));
    }
    const invited = invitation ? await gh.signup.invitation(invitation) : undefined;
    return show(reply, 200, secret, { ...(invited ? { invitation, email: invited.email } : {}) });
  });

  app.post('/signup', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'username', 'email', 'password', 'invitation', 'altcha')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the sign-up form must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const invitation = str(body, 'invitation')?.slice(0, 128);
    const refused = await closed(reply, invitation);
    if (refused) return refused;
    const secret = req.cookies[csrfCookie(gh)];
    if (!secret || !csrfValid(secret, SIGNUP, body.csrf_token)) {
      return sendErrorPage(reply, 403, 'Request expired', 'This sign-up form has expired. Go back and reload the page.');
    }
    const input = { username: str(body, 'username') ?? '', email: str(body, 'email') ?? '', password: str(body, 'password') ?? '' };
    const again = (status: number, error: string) =>
      show(reply, status, secret, { username: input.username.slice(0, 64), email: input.email.slice(0, 254), error, ...(invitation ? { invitation } : {}) });
    if (!(await gh.proofOfWork.verify(str(body, 'altcha')))) {
      return again(400, 'The check that you are a person did not finish, or was used already. Wait until the form says "Ready", then send it.');
    }
    try {
      const user = await gh.signup.signUp({ ...input, invitation, address: req.ip });
      // Signed in as at the login page (single sign-on: src/core/oidc/sso.ts).
      const { id, ended } = await gh.sso.signIn(req.cookies[sessionCookie(gh)], user.id, req.headers['user-agent'], { username: user.username, ip: req.ip });
      logUndelivered(req, ended);
      reply.setCookie(sessionCookie(gh), id, cookieOptions(gh, Math.floor(gh.sessions.ttlMs / 1000)));
      return reply.redirect('/', 303);
    } catch (e) {
      if (!(e instanceof SignupRefused)) throw e;
      if (e.retryAfterSeconds) reply.header('retry-after', String(e.retryAfterSeconds));
      return again(e.status, e.description ?? 'The account could not be created.');
    }
  });
}
