import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { bearerErrorResponse } from '../http/errors.js';
import type { Params } from '../core/params.js';
import type { VerifiedToken } from '../core/resource/token.js';
import { BearerGuard, type GatehouseAuthOptions, type ScopeSpec } from './options.js';
import { requireMembership } from '../core/resource/step-up.js';
import { publishResourceMetadata } from './resource-metadata.js';

/**
 * Per-route setting: the scope the route needs, the authentication level and
 * age (RFC 9470; default the plugin's `acr`/`maxAge`), the role or group the
 * token must carry (403 `insufficient_scope` otherwise), or `false` for a public route.
 */
export type RouteAuth = false | { scope?: ScopeSpec; acr?: string; maxAge?: number; role?: string; group?: string };

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified access token (set by the Gatehouse plugin on protected routes). */
    auth: VerifiedToken | null;
  }
}

export function sendBearerError(reply: FastifyReply, err: unknown, realm: string): FastifyReply {
  const r = bearerErrorResponse(err, realm, reply.log);
  return reply.code(r.status).headers(r.headers).type('application/json').send(r.body);
}

/**
 * Protects every route of the Fastify context it is registered in (and its
 * children): a request needs a valid Gatehouse access token, and the scope
 * named in the route's `config.auth`. `config: { auth: false }` leaves a
 * route public. The token's facts are on `request.auth`.
 */
export const gatehouseFastify: FastifyPluginAsync<GatehouseAuthOptions> = async (app, opts) => {
  const guard = new BearerGuard(opts);
  if (!app.hasRequestDecorator('auth')) app.decorateRequest('auth', null);
  const metadata = guard.resourceMetadata;
  if (metadata) publishResourceMetadata(app, metadata.path, () => metadata);
  // preHandler: after body parsing, so the form-body method (RFC 6750 §2.2) is seen.
  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    // Not declared on FastifyContextConfig: an all-optional key there would reject other routes' configs.
    const route = (req.routeOptions.config as { auth?: RouteAuth } | undefined)?.auth;
    if (route === false) return;
    try {
      req.auth = await guard.authenticate({
        method: req.method,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        query: req.query as Params,
        body: req.body,
        clientCertThumbprint: guard.clientCertificate(req.raw),
        dpop: req.headers.dpop,
        url: guard.requestUrl(req.raw),
      }, route?.scope, ...(route?.acr !== undefined || route?.maxAge !== undefined ? [{ acr: route.acr, maxAge: route.maxAge }] : []));
      if (route?.role !== undefined) requireMembership(req.auth, 'roles', route.role);
      if (route?.group !== undefined) requireMembership(req.auth, 'groups', route.group);
    } catch (e) {
      return sendBearerError(reply, e, guard.realm);
    }
  });
};

// What fastify-plugin does: the hook applies to the context that registers the plugin, not a child of it.
Object.assign(gatehouseFastify, { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: 'gatehouse-bearer' });
