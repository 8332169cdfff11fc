import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidRequest, type GatehouseError } from '../core/errors.js';
import type { Params } from '../core/params.js';
import { errorPage } from './pages/pages.js';
import { handlerFor, oauthAnswer, pageAnswer, PAGE_HEADERS, sendAnswer } from './errors.js';
import type { Gatehouse } from '../gatehouse.js';

/** RFC 6749 §5.1: token responses must not be cached. */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

/** An HTML page with the headers every page carries (src/http/errors.ts). */
export function sendPage(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).headers(PAGE_HEADERS).send(body);
}

export function sendErrorPage(reply: FastifyReply, status: number, title: string, message: string): FastifyReply {
  return sendPage(reply, status, errorPage(title, message));
}

/** The media type, any case, blanks around it, then parameters or nothing: tested without splitting the header on every request. */
const FORM_TYPE = /^\s*application\/x-www-form-urlencoded\s*(?:;|$)/i;

export function isForm(req: FastifyRequest): boolean {
  const type = req.headers['content-type'];
  return typeof type === 'string' && FORM_TYPE.test(type);
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

/** RFC 6749 §5.2 JSON error (src/http/errors.ts). */
export function sendOAuthError(reply: FastifyReply, err: GatehouseError): FastifyReply {
  return sendAnswer(reply, oauthAnswer(err));
}

export type RouteKind = 'json' | 'page';

const kindOf = (req: FastifyRequest): RouteKind => ((req.routeOptions?.config as { kind?: RouteKind } | undefined)?.kind) ?? 'json';

/**
 * The authorization server's error handler: an HTML page on the routes a
 * person sees (`config: { kind: 'page' }`), RFC 6749 §5.2 JSON elsewhere.
 */
export const handleError = handlerFor((e, req) => (kindOf(req) === 'page' ? pageAnswer(e) : oauthAnswer(e)));

/**
 * GET /readyz for load balancers: 503 only when the database is unreachable
 * (nothing can be served); with Redis down it stays 200 and says
 * `degraded`, as token issuance and introspection do not need Redis. Each
 * check gives up within about a second and a half, so it never hangs.
 * /healthz (liveness) stays 200 while the process itself runs.
 */
export async function readiness(gh: Gatehouse, reply: FastifyReply): Promise<FastifyReply> {
  const health = gh.storage.health ? await gh.storage.health() : { database: (await gh.storage.ready()) ? 'ok' : 'down' };
  reply.header('cache-control', 'no-store');
  if (health.database !== 'ok') return reply.code(503).send({ status: 'unavailable', ...health });
  return reply.code(200).send({ status: 'redis' in health && health.redis !== 'ok' ? 'degraded' : 'ready', ...health });
}

/**
 * CORS for endpoints that take bearer tokens ({api_url}/user, userinfo): a
 * bearer token is not an ambient credential, so any origin may call with one
 * (a client's code running in the browser calls the API, from the client's own origin).
 * A browser client using DPoP sends the `DPoP` header and reads `DPoP-Nonce` (RFC 9449 §7.1, §9).
 */
export const BEARER_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST',
  'access-control-allow-headers': 'Authorization, Content-Type, DPoP',
  'access-control-expose-headers': 'WWW-Authenticate, DPoP-Nonce',
  'access-control-max-age': '600',
} as const;
