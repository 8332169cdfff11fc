import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { consentScope, type AuthorizationRequest } from '../../core/oauth/authorize.js';
import { GatehouseError } from '../../core/errors.js';
import { single, type Params } from '../../core/params.js';
import { formatScope } from '../../core/scope.js';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import type { Gatehouse } from '../../gatehouse.js';
import { isForm, sendErrorPage, sendPage } from '../common.js';
import { consentPage } from '../pages/pages.js';
import { AUTHORIZE_PATHS } from './oauth-routes.js';
import { currentSession } from './session-cookie.js';
import { startSecondStep } from './second-step-routes.js';
import { PARAMS, formBody } from '../input.js';
import { consumePushed, pushedRequest } from './par-routes.js';
import { ACR_ATTEMPT, afterReauthentication, authorizationStep } from '../../core/oidc/prompt.js';
import { sessionSid } from '../../core/oidc/sso.js';
import type { Session, User } from '../../core/model.js';

/** The person approving, with how their session authenticated (`acr`/`amr` of the tokens, src/core/oidc/acr.ts). */
const signedInUser = (current: { session: Session; user: User }) => ({
  id: current.user.id, authTime: current.session.authTime, sid: sessionSid(current.session),
  ...(current.session.amr ? { amr: current.session.amr } : {}),
});

const CONSENT = 'consent';

/** Hidden fields that carry the request from the consent page to the decision POST. */
function requestFields(ar: AuthorizationRequest): Record<string, string | readonly string[] | undefined> {
  return {
    client_id: ar.client.id,
    redirect_uri: ar.redirectUriParam ?? undefined,
    response_type: ar.responseType,
    scope: formatScope(ar.scope),
    state: ar.state,
    code_challenge: ar.codeChallenge,
    code_challenge_method: ar.codeChallenge ? 'S256' : undefined,
    resource: ar.resources,
    dpop_jkt: ar.dpopJkt,
    nonce: ar.nonce,
    // OpenID Connect Core §5.5, as kept: the claims we hold that were asked for.
    claims: ar.claims ? JSON.stringify({ userinfo: claimMap(ar.claims.userinfo), id_token: claimMap(ar.claims.id_token) }) : undefined,
  };
}

function claimMap(names: readonly string[]): Record<string, null> {
  return Object.fromEntries(names.map((n) => [n, null]));
}

/** Where the answer goes, as a person reads it: the host, or a native app's scheme. */
function returnsTo(redirectUri: string): string | undefined {
  try {
    const u = new URL(redirectUri);
    return u.host || u.protocol.replace(/:$/, '') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Node's HTTP parser, and so most clients, refuse response headers over
 * 16 KB (some proxies 8 KB): an authorization request so large that its
 * encoded return address would not fit gets a page, not a Location header
 * that breaks the connection (found by the fuzz: a 10 KB `state`).
 */
const MAX_LOGIN_REDIRECT = 8192;

/** Parameters as a query string, a repeated one repeated. */
function queryOf(params: Params): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const one of typeof v === 'string' ? [v] : v ?? []) q.append(k, one);
  return q.toString();
}

function loginRedirect(reply: FastifyReply, returnTo: string, status: 302 | 303, loginHint?: string) {
  // OpenID Connect Core §3.1.2.1 login_hint: fills the username field, nothing more.
  const hint = loginHint ? `&login_hint=${encodeURIComponent(loginHint)}` : '';
  const target = `/login?return_to=${encodeURIComponent(returnTo)}${hint}`;
  if (target.length > MAX_LOGIN_REDIRECT) return sendErrorPage(reply, 400, 'This sign-in link is too long', 'Go back to the application and try again.');
  return reply.redirect(target, status);
}

/**
 * The authorization endpoint, both path shapes (RFC 6749 §3.1). GET shows
 * the login or consent page; POST carries the person's decision.
 */
export async function authorizeRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const page = { kind: 'page' as const };

  const fail = (reply: FastifyReply, e: unknown, status: 302 | 303) => {
    // RFC 6749 §4.1.2.1: to the verified redirect URI when there is one, else a page (the error handler's).
    if (!(e instanceof GatehouseError) || e.status >= 500) throw e;
    if (e.redirect) return reply.redirect(gh.authorization.errorRedirect(e, e.redirect), status);
    throw e.with({ status: 400, title: 'This sign-in link is not valid' });
  };

  /**
   * An authorization request, sent by GET (its query) or by POST (a form
   * without the consent CSRF field): OpenID Connect Core §3.1.2.1 asks for
   * both, with the same rules. After a POST the browser is sent on with 303.
   */
  const show = async (req: FastifyRequest, reply: FastifyReply, params: Params, status: 302 | 303) => {
    // RFC 9126 §4: a request_uri stands for the request its client pushed.
    const pushed = await pushedRequest(gh, reply, params);
    if (!pushed) return reply;
    let ar: AuthorizationRequest;
    try {
      ar = await gh.authorization.validate(pushed.params);
    } catch (e) {
      return fail(reply, e, status);
    }
    const current = await currentSession(gh, req);
    // OpenID Connect prompt and max_age decide between signing in, consent and answering at once (src/core/oidc/prompt.ts).
    const acrAttempted = typeof params[ACR_ATTEMPT] === 'string';
    const step = await authorizationStep(ar.authentication, current?.session, gh.clock.now(), () => gh.authorization.needsConsent(ar, current!.user.id), acrAttempted);
    if (step.next === 'error') {
      return reply.redirect(gh.authorization.errorRedirect(step.error, { redirectUri: ar.redirectUri, mode: ar.responseType === 'code' ? 'query' : 'fragment', state: ar.state }), status);
    }
    const path = req.url.split('?')[0]!;
    // A POSTed request comes back after sign-in as the same request sent by GET.
    const back = afterReauthentication(req.method === 'GET' ? req.url : `${path}?${queryOf(params)}`, ar.authentication.acrValues !== undefined);
    // Issue 28: a session below acr_values whose person has a second factor is asked for that step only.
    if (step.next === 'login' && step.stepUp && current && (await gh.mfa.factors.required(current.user.id))) return startSecondStep(gh, req, reply, current.user, back);
    if (step.next === 'login' || !current) return loginRedirect(reply, back, status, ar.loginHint);
    const user = signedInUser(current);
    if (step.next === 'approve') {
      if (!(await consumePushed(gh, reply, pushed))) return reply;
      return reply.redirect(await gh.authorization.approve(ar, user), status);
    }
    return sendPage(reply, 200, consentPage({
      clientName: ar.client.name,
      username: current.user.username,
      name: current.user.name,
      scope: consentScope(ar),
      returnsTo: returnsTo(ar.redirectUri),
      csrf: csrfToken(current.id, CONSENT),
      action: path,
      // A pushed request travels as its handle only, so nothing in the form can change it.
      fields: pushed.requestUri ? { client_id: ar.client.id, request_uri: pushed.requestUri } : requestFields(ar),
    }));
  };

  const decide = async (req: FastifyRequest, reply: FastifyReply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the decision must be sent as a form');
    const body = (req.body ?? {}) as Params;
    // Not the consent form: an authorization request sent by POST (OpenID Connect Core §3.1.2.1).
    if (body.csrf_token === undefined) return show(req, reply, body, 303);
    const path = req.url.split('?')[0]!;
    const current = await currentSession(gh, req);
    if (!current) {
      // Signed out meanwhile: sign in again, then see the consent page again.
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(body)) if (typeof v === 'string' && k !== 'approve' && k !== 'csrf_token') q.set(k, v);
      return loginRedirect(reply, `${path}?${q}`, 303);
    }
    if (!csrfValid(current.id, CONSENT, body.csrf_token)) {
      return sendErrorPage(reply, 403, 'Request expired', 'This form is no longer valid. Go back to the application and try again.');
    }
    const pushedBody = await pushedRequest(gh, reply, body);
    if (!pushedBody) return reply;
    let ar: AuthorizationRequest;
    try {
      ar = await gh.authorization.validate(pushedBody.params);
    } catch (e) {
      return fail(reply, e, 303);
    }
    let approve: string | undefined;
    try {
      approve = single(body, 'approve');
    } catch {
      approve = undefined;
    }
    // RFC 9126 §4: the first decision on a pushed request consumes it; a replayed form finds it gone.
    if ((approve === 'true' || approve === 'false') && !(await consumePushed(gh, reply, pushedBody))) return reply;
    // 303 after a POST, so the browser does not re-post the form to the client (RFC 9700 §4.12).
    if (approve === 'true') {
      return reply.redirect(await gh.authorization.approve(ar, signedInUser(current)), 303);
    }
    if (approve === 'false') return reply.redirect(await gh.authorization.deny(ar, current.user.id), 303);
    return sendErrorPage(reply, 400, 'Bad request', 'approve must be true or false');
  };

  for (const url of AUTHORIZE_PATHS) {
    app.get(url, { config: page, schema: { querystring: PARAMS } }, (req, reply) => show(req, reply, req.query as Params, 302));
    app.post(url, { config: page, schema: { body: formBody(PARAMS) } }, decide);
  }
}
