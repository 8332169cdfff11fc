import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { csrfToken, csrfValid } from '../../core/sessions.js';
import { openIdConfiguration, END_SESSION_PATH, USERINFO_PATH } from '../../core/oidc/discovery.js';
import { parseEndSession, type EndSessionRequest } from '../../core/oidc/end-session.js';
import { userInfo } from '../../core/oidc/userinfo.js';
import { buildRedirect } from '../../core/oauth/authorize.js';
import { extractBearerToken } from '../../core/resource/bearer.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { sendBearerError } from '../../middleware/fastify.js';
import { BEARER_CORS, isForm, noStore, sendErrorPage, sendPage } from '../common.js';
import { logoutConfirmPage, signedOutPage } from '../pages/account.js';
import { metadata } from './oauth-routes.js';
import { clearSession, currentSession, logUndelivered } from './session-cookie.js';
import { PARAMS, formBody, paramsOf } from '../input.js';

const END_SESSION = 'end-session';
const REALM = 'gatehouse';

/** UserInfo answers bearer tokens, which are not ambient credentials: any origin may call it (as {api_url}/user). */

/**
 * OpenID Connect at the authorization server: discovery, UserInfo, and
 * RP-initiated logout (the end-session endpoint), whose sign-out also
 * notifies every application of the session by back-channel.
 */
export async function oidcRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const json = { kind: 'json' as const };
  const page = { kind: 'page' as const };

  app.get('/.well-known/openid-configuration', { config: json }, async () => openIdConfiguration(metadata(gh), gh.oauth.issuer));

  // OpenID Connect Core §5.3: GET or POST, the access token as RFC 6750 allows.
  const userinfo = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.headers(BEARER_CORS);
    noStore(reply);
    try {
      const token = extractBearerToken({
        method: req.method, authorization: req.headers.authorization, contentType: req.headers['content-type'],
        query: req.query as Params, body: req.body,
      });
      return await userInfo({ inspector: gh.inspector, users: gh.storage.users, signIns: gh.storage.signIns, audience: gh.oauth.audience, accessClaims: gh.access.claims }, token);
    } catch (e) {
      return sendBearerError(reply, e, REALM);
    }
  };
  // RFC 6750 §2.2, §2.3: access_token as a form field or query parameter, a string.
  app.get(USERINFO_PATH, { config: json, schema: { querystring: PARAMS } }, userinfo);
  app.post(USERINFO_PATH, { config: json, schema: { querystring: PARAMS, body: formBody(PARAMS) } }, userinfo);
  app.options(USERINFO_PATH, { config: json }, async (_req, reply) => reply.headers(BEARER_CORS).code(204).send());

  /** After sign-out: back to the application when it named a registered address (§3), else our own page. */
  const finish = (reply: FastifyReply, es: Pick<EndSessionRequest, 'postLogoutRedirectUri' | 'state'>, status: 302 | 303) => {
    if (es.postLogoutRedirectUri) return reply.redirect(buildRedirect(es.postLogoutRedirectUri, 'query', { state: es.state }), status);
    return sendPage(reply, 200, signedOutPage());
  };

  /** A request that cannot be honoured throws; the error handler shows it as a page ("This sign-out link is not valid"). */
  const parse = (params: Params): Promise<EndSessionRequest> =>
    parseEndSession(params, { clients: gh.storage.clients, keys: gh.keys, issuer: gh.oauth.issuer, now: gh.clock.now() });

  // OpenID Connect RP-Initiated Logout 1.0 §2: GET or POST (form).
  const endSession = async (req: FastifyRequest, reply: FastifyReply) => {
    const params = (req.method === 'GET' ? req.query : isForm(req) ? req.body : {}) as Params;
    const es = await parse(params ?? {});
    const current = await currentSession(gh, req);
    if (!current) {
      clearSession(gh, reply);
      return finish(reply, es, 302);
    }
    // An ID token we issued to this person is proof enough that the request comes from their application;
    // without one, a page elsewhere could sign them out, so they are asked (§2, §6).
    if (es.hint && es.hint.sub === current.user.id) {
      logUndelivered(req, await gh.sso.signOut(current.session));
      clearSession(gh, reply);
      return finish(reply, es, 302);
    }
    return sendPage(reply, 200, logoutConfirmPage({
      username: current.user.username,
      clientName: es.client?.name,
      csrf: csrfToken(current.id, END_SESSION),
      fields: { client_id: es.client?.id, post_logout_redirect_uri: es.postLogoutRedirectUri, state: es.state },
    }));
  };
  // RP-Initiated Logout 1.0 §2 parameters.
  const logout = paramsOf('id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state');
  app.get(END_SESSION_PATH, { config: page, schema: { querystring: logout } }, endSession);
  app.post(END_SESSION_PATH, { config: page, schema: { body: formBody(logout) } }, endSession);

  const confirm = paramsOf('csrf_token', 'logout', 'client_id', 'post_logout_redirect_uri', 'state');
  app.post(`${END_SESSION_PATH}/confirm`, { config: page, schema: { body: formBody(confirm) } }, async (req, reply) => {
    if (!isForm(req)) return sendErrorPage(reply, 400, 'Bad request', 'the decision must be sent as a form');
    const body = (req.body ?? {}) as Params;
    const es = await parse({ client_id: body.client_id, post_logout_redirect_uri: body.post_logout_redirect_uri, state: body.state });
    const current = await currentSession(gh, req);
    if (current) {
      if (!csrfValid(current.id, END_SESSION, body.csrf_token)) return sendErrorPage(reply, 403, 'Request expired', 'Reload the page and sign out again.');
      if (body.logout !== 'yes') return es.postLogoutRedirectUri ? finish(reply, es, 303) : reply.redirect('/', 303);
      logUndelivered(req, await gh.sso.signOut(current.session));
    }
    clearSession(gh, reply);
    return finish(reply, es, 303);
  });
}
