import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ChoiceError, type Federation, type Provider } from '../../core/federation/index.js';
import { accessDenied } from '../../core/errors.js';
import { single, type Params } from '../../core/params.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { firstSignInPage } from '../pages/federation.js';
import { PARAMS, formBody, paramsOf } from '../input.js';
import { startSecondStep } from './second-step-routes.js';
import { cookieOptions, logUndelivered, safeReturnTo, sessionCookie } from './session-cookie.js';

/** The `state` of a sign-in at a provider, bound to this browser (RFC 6749 §10.12). */
const STATE_COOKIE = 'gh_fed_state';
/** A first sign-in waiting for the person to create or link an account. */
const PENDING_COOKIE = 'gh_fed_pending';
const CSRF_PURPOSE = 'federation';
const FLOW_SECONDS = 600;

const str = (params: Params, name: string): string | undefined => {
  try {
    return single(params, name);
  } catch {
    return undefined;
  }
};

/** Where a provider sends the person back; registered at the provider as the client's redirect URI. */
export const callbackUrl = (gh: Gatehouse, p: Provider) => `${gh.oauth.issuer}/federation/${p.id}/callback`;

/** The "Sign in with …" links of the login page, carrying where the sign-in continues to. */
export function signInWithLinks(gh: Gatehouse, returnTo: string): { name: string; href: string }[] {
  return gh.config.federationProviders.map((p) => ({ name: p.name, href: `/federation/${p.id}/start?return_to=${encodeURIComponent(returnTo)}` }));
}

/**
 * Third-party login at {auth_url}/federation/…: start a sign-in at a
 * provider, take its answer, and, the first time, let the person create an
 * account or link one they prove is theirs.
 */
export async function federationRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  if (!gh.federation) return;
  const federation: Federation = gh.federation;
  const page = { config: { kind: 'page' as const } };
  const provider = z.object({ provider: z.string() });
  // Only the /federation pages need these cookies.
  const flowCookie = (maxAge?: number) => ({ ...cookieOptions(gh, maxAge), path: '/federation' });

  /**
   * As the password form does: an account with a second factor gets the
   * second step (the provider vouched for the first factor only, as Keycloak
   * applies its own after a brokered login; docs/security.md); otherwise a
   * fresh cookie, single sign-on's `sid` kept for the same person
   * (src/core/oidc/sso.ts).
   */
  async function startSession(req: FastifyRequest, reply: FastifyReply, userId: string, returnTo: string): Promise<FastifyReply> {
    // An administrator locked the account (admin console): no provider signs it in either.
    if (await gh.console.isLocked(userId)) throw accessDenied('This account is locked. Ask an administrator to unlock it.');
    const user = await gh.storage.users.get(userId);
    if (!user) throw accessDenied('This account no longer exists.');
    if (await gh.mfa.factors.required(userId)) return startSecondStep(gh, req, reply, user, returnTo);
    const { id, ended } = await gh.sso.signIn(req.cookies[sessionCookie(gh)], userId, req.headers['user-agent'], { username: user.username, ip: req.ip }, ['fed']);
    logUndelivered(req, ended);
    reply.setCookie(sessionCookie(gh), id, cookieOptions(gh, Math.floor(gh.sessions.ttlMs / 1000)));
    return reply.redirect(returnTo, 303);
  }

  const providerOf = (id: string, reply: FastifyReply) => {
    const p = federation.provider(id);
    if (!p) sendErrorPage(reply, 404, 'Not found', 'There is no such sign-in provider.');
    return p;
  };

  app.get<{ Params: { provider: string } }>('/federation/:provider/start', { ...page, schema: { params: provider, querystring: paramsOf('return_to') } }, async (req, reply) => {
    const p = providerOf(req.params.provider, reply);
    if (!p) return reply;
    const returnTo = safeReturnTo(gh, str(req.query as Params, 'return_to'));
    const { location, state } = await federation.signIn.begin(p, callbackUrl(gh, p), returnTo);
    reply.setCookie(STATE_COOKIE, state, flowCookie(FLOW_SECONDS));
    return reply.redirect(location, 302);
  });

  // The provider's authorization response (RFC 6749 §4.1.2, §4.1.2.1; RFC 9207 iss).
  app.get<{ Params: { provider: string } }>('/federation/:provider/callback', { ...page, schema: { params: provider, querystring: PARAMS } }, async (req, reply) => {
    const p = providerOf(req.params.provider, reply);
    if (!p) return reply;
    const state = req.cookies[STATE_COOKIE];
    reply.clearCookie(STATE_COOKIE, flowCookie());
    const { profile, returnTo } = await federation.signIn.finish(p, req.query as Params, state);
    const outcome = await federation.accounts.signIn(profile, returnTo);
    if ('userId' in outcome) return startSession(req, reply, outcome.userId, returnTo);
    reply.setCookie(PENDING_COOKIE, outcome.pending, flowCookie(FLOW_SECONDS));
    return reply.redirect('/federation/continue', 303);
  });

  const expired = (reply: FastifyReply) => sendErrorPage(reply, 400, 'Sign-in expired', 'This sign-in has expired. Start again from the sign-in page.');

  async function choicePage(req: FastifyRequest, reply: FastifyReply, status: number, extra: { error?: string; errorIn?: 'create' | 'link'; linkUsername?: string } = {}) {
    const handle = req.cookies[PENDING_COOKIE];
    const pending = await federation.accounts.pending(handle);
    if (!pending || !handle) return expired(reply);
    const p = federation.provider(pending.profile.provider);
    return sendPage(reply, status, firstSignInPage({
      providerName: p?.name ?? pending.profile.provider,
      who: pending.profile.username ?? pending.profile.email ?? pending.profile.name ?? pending.profile.subject,
      suggestion: pending.suggestion,
      csrf: csrfToken(handle, CSRF_PURPOSE),
      ...extra,
    }));
  }

  app.get('/federation/continue', page, (req, reply) => choicePage(req, reply, 200));

  app.post('/federation/continue', { ...page, schema: { body: formBody(paramsOf('csrf_token', 'action', 'username', 'password')) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the form must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const handle = req.cookies[PENDING_COOKIE];
    if (!handle) return expired(reply);
    if (!csrfValid(handle, CSRF_PURPOSE, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'This form has expired. Go back and reload the page.');
    const action = str(body, 'action');
    const username = (str(body, 'username') ?? '').trim();
    try {
      let done: { userId: string; returnTo: string };
      if (action === 'create') done = await federation.accounts.create(handle, username);
      else if (action === 'link') done = await federation.accounts.link(handle, username, str(body, 'password') ?? '', req.ip);
      else return sendErrorPage(reply, 400, 'Bad request', 'action must be create or link');
      reply.clearCookie(PENDING_COOKIE, flowCookie());
      return await startSession(req, reply, done.userId, done.returnTo);
    } catch (e) {
      if (!(e instanceof ChoiceError)) throw e;
      return choicePage(req, reply, e.status, { error: e.message, errorIn: action === 'create' ? 'create' : 'link', linkUsername: action === 'link' ? username.slice(0, 64) : '' });
    }
  });
}
