import type { FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError, invalidRequest } from '../core/errors.js';
import type { Params } from '../core/params.js';
import { ClientAuthError } from '../core/oauth/client-auth.js';
import { errorPage } from './pages/pages.js';

/** RFC 6749 §5.1: token responses must not be cached. */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/**
 * Headers for every HTML page: no framing (clickjacking, RFC 6819 §4.4.1.9),
 * no referrer leaking codes or state (RFC 9700 §4.2.4), no caching, and a CSP
 * that allows only our own stylesheet. `form-action` is left out on purpose:
 * browsers apply it to the redirect after the consent form, which must be
 * allowed to reach the client's redirect URI.
 */
export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('x-frame-options', 'DENY')
    .header('content-security-policy', "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'")
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .send(body);
}

export function sendErrorPage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return sendPage(reply, status, errorPage(title, message));
}

export function isForm(req: FastifyRequest): boolean {
  const type = req.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';
}

/** The form body as parameters; anything that is not a form is `invalid_request`. */
export function formParams(req: FastifyRequest): Params {
  if (!isForm(req)) throw invalidRequest('the request body must be application/x-www-form-urlencoded');
  return (req.body ?? {}) as Params;
}

/** A plain loop, no arrays built: this runs on every request. */
function hasNul(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return v.includes('\0');
  if (depth > 16 || v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  for (const k in o) {
    if (Object.hasOwn(o, k) && (k.includes('\0') || hasNul(o[k], depth + 1))) return true;
  }
  return false;
}

/**
 * preHandler hook: no parameter of ours holds U+0000 and PostgreSQL text
 * cannot store or compare one, so such a request would fail as a 500 deep in
 * a query; it is `invalid_request` here instead. Callback style: an async
 * hook would cost a promise on every request.
 */
export function rejectNulCharacters(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (hasNul(req.query) || hasNul(req.params) || hasNul(req.body)) done(invalidRequest('parameters must not contain NUL characters'));
  else done();
}

/** RFC 6749 §5.2 JSON error, with the Basic challenge where §5.2 asks for it. */
export function sendOAuthError(reply: FastifyReply, err: OAuthError): FastifyReply {
  noStore(reply);
  if (err instanceof ClientAuthError || (err.error === 'invalid_client' && err.status === 401)) {
    reply.header('www-authenticate', 'Basic realm="gatehouse", charset="UTF-8"');
  }
  return reply.code(err.status).type('application/json').send(err.toJSON());
}

export type RouteKind = 'json' | 'page';

/**
 * One error handler for the server: protocol errors keep their RFC shape;
 * framework errors from bad input (malformed body, wrong media type, too
 * large) become `invalid_request`; anything else is logged and shown as
 * `server_error` without detail.
 */
export function handleError(error: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const kind = ((req.routeOptions?.config as { kind?: RouteKind } | undefined)?.kind) ?? 'json';
  let oauth: OAuthError;
  if (error instanceof OAuthError) {
    oauth = error;
  } else {
    const status = (error as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      oauth = new OAuthError('invalid_request', (error as Error).message, status === 413 ? 413 : 400);
    } else {
      req.log.error({ err: error }, 'request failed');
      oauth = new OAuthError('server_error', 'internal error');
    }
  }
  if (kind === 'page') return sendErrorPage(reply, oauth.status, oauth.status >= 500 ? 'Something went wrong' : 'Bad request', oauth.description ?? oauth.error);
  return sendOAuthError(reply, oauth);
}

/**
 * CORS for endpoints that take bearer tokens ({api_url}/user, userinfo): a
 * bearer token is not an ambient credential, so any origin may call with one
 * (spec §4 rules 1.6 and 2.3: the client's browser side calls the API).
 */
export const BEARER_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST',
  'access-control-allow-headers': 'Authorization, Content-Type',
  'access-control-expose-headers': 'WWW-Authenticate',
  'access-control-max-age': '600',
} as const;
