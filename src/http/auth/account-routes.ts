import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accountOverview, revokeApp } from '../../core/oidc/account.js';
import { resetSessions } from '../../core/console/actions.js';
import { sessionSid } from '../../core/oidc/sso.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendErrorPage, sendPage } from '../common.js';
import { accountPage } from '../pages/account.js';
import { clearSession, currentSession, logUndelivered } from './session-cookie.js';
import { signedInForm } from './signed-in-form.js';
import { formBody, paramsOf } from '../input.js';
import type { ProfileView } from '../pages/account-profile.js';
import { accountProfileRoutes } from './account-profile-routes.js';

const ACCOUNT = 'account';

function field(body: Params, name: string): string | undefined {
  try {
    return single(body, name);
  } catch {
    return undefined;
  }
}

/**
 * The account page ({auth_url}/account): the signed-in person's sessions and
 * the applications they allowed, each with a form to end it. Plain forms
 * with a CSRF token bound to the session; no script needed.
 */
export async function accountRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };

  const show = async (req: FastifyRequest, reply: FastifyReply, status = 200, notice?: string, error?: ProfileView['error']) => {
    const current = await currentSession(gh, req);
    if (!current) return reply.redirect(`/login?return_to=${encodeURIComponent('/account')}`, 302);
    const { sessions, apps } = await accountOverview(gh, current.user.id, current.session);
    const csrf = csrfToken(current.id, ACCOUNT);
    const { user } = current;
    return sendPage(reply, status, accountPage({
      username: user.username, name: user.name, csrf, sessions, apps, notice,
      profile: {
        csrf, name: user.name, email: user.email, emailVerified: user.emailVerified === true, mailEnabled: gh.mailer.enabled,
        fresh: gh.reauth.fresh(current.session), ...(error ? { error } : {}),
      },
    }));
  };

  app.get('/account', { config: page, schema: { querystring: paramsOf('done') } }, (req, reply) => {
    const done = (req.query as Params).done;
    const notice = done === 'session' ? 'That browser is signed out.'
      : done === 'others' ? 'Every other browser is signed out. This one stays signed in.'
        : done === 'app' ? 'The app no longer has access to your account.'
          : done === 'password' ? 'Your password is changed. Every other browser is signed out.'
            : done === 'name' ? 'Your name is saved.'
              : done === 'email' ? 'We sent a link to the new address. It becomes your address once you follow the link (within 24 hours).' : undefined;
    return show(req, reply, 200, notice);
  });

  /** Common checks of both forms: signed in, a form, a valid CSRF token. */
  const guard = (req: FastifyRequest, reply: FastifyReply) => signedInForm(gh, req, reply, { path: '/account', purpose: ACCOUNT, name: 'account page' });

  app.post('/account/sessions/revoke', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'sid')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const sid = field(ok.body, 'sid');
    const deliveries = sid ? await gh.sso.revokeSession(ok.current.user.id, sid) : undefined;
    if (!deliveries) return sendErrorPage(reply, 404, 'Not found', 'That session has already ended.');
    logUndelivered(req, deliveries);
    // Signing this very browser out leaves nothing to show here.
    if (sid === sessionSid(ok.current.session)) {
      clearSession(gh, reply);
      return reply.redirect('/', 303);
    }
    return reply.redirect('/account?done=session', 303);
  });

  /**
   * "Sign out everywhere else": every other session of the person ends, through
   * the same code as the console's "reset sessions", so the applications each
   * one signed in to hear of it (Back-Channel Logout) and its tokens end.
   */
  app.post('/account/sessions/others', { config: page, schema: { body: formBody(paramsOf('csrf_token')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const revoke = async (userId: string, sid: string) => {
      const deliveries = await gh.sso.revokeSession(userId, sid);
      if (deliveries) logUndelivered(req, deliveries);
    };
    await resetSessions({ storage: gh.storage, clock: gh.clock, revoke }, ok.current.user.id, { keep: sessionSid(ok.current.session) });
    return reply.redirect('/account?done=others', 303);
  });

  app.post('/account/apps/revoke', { config: page, schema: { body: formBody(paramsOf('csrf_token', 'client_id')) } }, async (req, reply) => {
    const ok = await guard(req, reply);
    if (!ok) return reply;
    const clientId = field(ok.body, 'client_id');
    if (!clientId || clientId.length > 255 || !(await revokeApp(gh, ok.current.user.id, clientId))) {
      return sendErrorPage(reply, 404, 'Not found', 'That app has no access to remove.');
    }
    return reply.redirect('/account?done=app', 303);
  });

  await accountProfileRoutes(app, gh, (req, reply, status, error) => show(req, reply, status, undefined, error));
}
