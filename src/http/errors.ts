import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { GatehouseError, invalidRequest, serverError, type Challenge, type DpopChallenge } from '../core/errors.js';
import { StorageUnavailableError } from '../core/unavailable.js';
import { errorPage } from './pages/pages.js';

/**
 * Where an error becomes an HTTP answer: one function per shape, the only
 * place that decides status, headers and body (docs/architecture.md, "Errors").
 * Every `setErrorHandler` calls `handlerFor(shape)`. Only a `GatehouseError`'s
 * public description reaches a client; its `detail` and anything else thrown
 * go to the log, and an unknown value answers 500 `server_error`.
 */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  /** JSON, or the HTML of an error page. */
  body: unknown;
}

type Log = Pick<FastifyBaseLogger, 'error' | 'warn' | 'debug'>;

let lastUnavailableLog = 0;

/** One warning per second at most: during an outage every request fails the same way. */
function logUnavailable(log: Log, error: StorageUnavailableError): void {
  const now = Date.now();
  if (now - lastUnavailableLog < 1000) return;
  lastUnavailableLog = now;
  const cause = error.cause as { message?: string; code?: string } | undefined;
  log.warn({ store: error.store, cause: { message: cause?.message, code: cause?.code } }, 'storage unavailable: answering 503');
}

/** Fastify's own refusals of bad input (malformed body, media type, size) carry a 4xx `statusCode`. */
const frameworkStatus = (error: unknown): number | undefined => {
  const status = (error as { statusCode?: number } | null)?.statusCode;
  return status && status >= 400 && status < 500 ? status : undefined;
};

/**
 * Any thrown value as a `GatehouseError`: itself; a framework refusal of bad
 * input as `invalid_request` (413 kept); anything else, logged with its
 * detail, as a bare `server_error`. `framework` lets a surface word the
 * framework refusals its own way (the Bot API).
 */
export function toGatehouseError(error: unknown, log: Log, framework: (error: Error, status: number) => GatehouseError = frameworkRefusal): GatehouseError {
  if (error instanceof StorageUnavailableError) {
    logUnavailable(log, error);
    return error;
  }
  if (error instanceof GatehouseError) {
    if (error.detail) (error.status >= 500 ? log.warn : log.debug).call(log, { code: error.code, detail: error.detail }, 'request refused');
    return error;
  }
  const status = frameworkStatus(error);
  if (status) return framework(error as Error, status);
  log.error({ err: error }, 'request failed');
  return serverError();
}

const frameworkRefusal = (error: Error, status: number) => invalidRequest(error.message, { status: status === 413 ? 413 : 400 });

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

function retryAfter(e: GatehouseError, headers: Record<string, string>): Record<string, string> {
  if (e.retryAfterSeconds !== undefined) headers['retry-after'] = String(e.retryAfterSeconds);
  return headers;
}

/** RFC 6750 §3: attribute values are quoted-strings limited to %x20-21 / %x23-5B / %x5D-7E. */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '')}"`;
}

/** error, description and scope of a challenge (RFC 6750 §3, RFC 9449 §7.1). */
function errorAttributes(e: GatehouseError, scope: string | undefined): string[] {
  const attrs = [`error=${quoted(e.code)}`];
  if (e.description) attrs.push(`error_description=${quoted(e.description)}`);
  if (scope) attrs.push(`scope=${quoted(scope)}`);
  return attrs;
}

/** RFC 9449 §7.1: `DPoP algs="…"`, with the error when it is the DPoP request's (`primary`). */
function dpopChallenge(e: GatehouseError, dpop: DpopChallenge, scope: string | undefined): string {
  return `DPoP ${[...(dpop.primary ? errorAttributes(e, scope) : []), `algs=${quoted(dpop.algs.join(' '))}`].join(', ')}`;
}

/**
 * An RFC 6750 §3 `Bearer` challenge: realm, then (unless bare) error,
 * description and scope; then the DPoP challenge where the resource takes
 * DPoP, which carries the error instead when the request used DPoP.
 */
function bearerChallenge(e: GatehouseError, realm: string, challenge: Extract<Challenge, { scheme: 'Bearer' }> | undefined): string {
  const attrs = [`realm=${quoted(challenge?.realm ?? realm)}`];
  const dpop = challenge?.dpop;
  if (!challenge?.bare && !dpop?.primary) attrs.push(...errorAttributes(e, undefined));
  if (challenge?.scope && !dpop?.primary) attrs.push(`scope=${quoted(challenge.scope)}`);
  // RFC 9470 §3: what a new token's authentication must meet.
  if (challenge?.acrValues) attrs.push(`acr_values=${quoted(challenge.acrValues)}`);
  if (challenge?.maxAge !== undefined) attrs.push(`max_age=${Math.max(0, Math.floor(challenge.maxAge))}`);
  const bearer = `Bearer ${attrs.join(', ')}`;
  return dpop ? `${bearer}, ${dpopChallenge(e, dpop, challenge?.scope)}` : bearer;
}

const bearerOf = (e: GatehouseError) => (e.challenge?.scheme === 'Bearer' ? e.challenge : undefined);

/**
 * RFC 6749 §5.2 JSON, never cached, with the Basic challenge §5.2 asks for
 * when a client failed to authenticate (unless the error says there is no
 * challenge to give), and `Retry-After` when the error names a wait.
 */
export function oauthAnswer(e: GatehouseError): ErrorAnswer {
  const headers: Record<string, string> = { ...NO_STORE };
  const basic = e.challenge ? e.challenge.scheme === 'Basic' : e.code === 'invalid_client' && e.status === 401;
  if (basic) headers['www-authenticate'] = 'Basic realm="gatehouse", charset="UTF-8"';
  const bearer = bearerOf(e);
  if (bearer) headers['www-authenticate'] = bearerChallenge(e, 'gatehouse', bearer);
  return { status: e.status, headers: retryAfter(e, headers), body: e.toJSON() };
}

const CHALLENGED = new Set(['invalid_request', 'invalid_token', 'insufficient_scope', 'invalid_dpop_proof', 'use_dpop_nonce', 'insufficient_user_authentication']);

/**
 * The resource server (RFC 6750 §3): status, `WWW-Authenticate` challenge for
 * authentication problems, no caching, and a JSON body repeating the error.
 * No credentials at all (a bare challenge) answer only a description.
 */
export function bearerAnswer(e: GatehouseError, realm: string): ErrorAnswer {
  const headers: Record<string, string> = { ...NO_STORE };
  const bearer = bearerOf(e);
  // RFC 9449 §9: the nonce the next proof must carry.
  if (bearer?.dpop?.nonce) headers['dpop-nonce'] = bearer.dpop.nonce;
  if (bearer?.bare) {
    headers['www-authenticate'] = bearerChallenge(e, realm, bearer);
    return { status: e.status, headers, body: { error_description: e.description! } };
  }
  if (CHALLENGED.has(e.code)) headers['www-authenticate'] = bearerChallenge(e, realm, bearer);
  return { status: e.status, headers: retryAfter(e, headers), body: e.toJSON() };
}

/**
 * The full RFC 6750 answer for anything a token check threw, for the
 * middleware of other applications (src/middleware) as for our own API.
 */
export function bearerErrorResponse(err: unknown, realm: string, log: Log = silent): ErrorAnswer & { body: Record<string, string> } {
  return bearerAnswer(toGatehouseError(err, log), realm) as ErrorAnswer & { body: Record<string, string> };
}

const silent: Log = { error: () => {}, warn: () => {}, debug: () => {} };

/**
 * An HTML page for a person: the error's title, or a generic one. A store
 * outage says which part is down in words a person can act on, and is never
 * a redirect (the client's redirect URI may not even be readable now).
 */
export function pageAnswer(e: GatehouseError): ErrorAnswer {
  const title = e.title ?? (e.status === 503 ? 'Temporarily unavailable' : e.status >= 500 ? 'Something went wrong' : 'Bad request');
  const message = e instanceof StorageUnavailableError
    ? e.store === 'redis' ? 'Signing in is briefly unavailable. Wait a few seconds, then try again.' : 'This service is briefly unavailable. Wait a few seconds, then try again.'
    : e.description ?? e.code;
  return { status: e.status, headers: retryAfter(e, { ...PAGE_HEADERS }), body: errorPage(title, message) };
}

/**
 * The admin API: `{error, error_description}` like RFC 6749 §5.2, never
 * cached; an unknown id is `not_found` (404) on every route.
 */
export const adminAnswer = oauthAnswer;

/** The chat client API: `{error, error_description}`, with the RFC 6750 challenge when the bearer token was refused. */
export function chatClientAnswer(e: GatehouseError): ErrorAnswer {
  const headers: Record<string, string> = {};
  const bearer = bearerOf(e);
  if (bearer) headers['www-authenticate'] = bearerChallenge(e, 'gatehouse', bearer);
  return { status: e.status, headers: retryAfter(e, headers), body: e.toJSON() };
}

/** The reason phrases the official Bot API server puts first in `description`. */
const REASONS: Record<number, string> = {
  400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 408: 'Request Timeout',
  409: 'Conflict', 413: 'Request Entity Too Large', 414: 'URI Too Long', 429: 'Too Many Requests', 431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

/** The Bot API's `description`: the reason phrase, then the error's own words (`Bad Request: chat not found`). */
export const botDescription = (e: GatehouseError): string => {
  const reason = REASONS[e.status] ?? 'Error';
  return e.description ? `${reason}: ${e.description}` : reason;
};

/**
 * The Bot API envelope `{ok:false, error_code, description, parameters?}`
 * with the HTTP status equal to `error_code`, as the official server
 * answers; a wait is `parameters.retry_after` and `Retry-After`.
 */
export function botAnswer(e: GatehouseError): ErrorAnswer {
  const parameters = e.retryAfterSeconds !== undefined ? { retry_after: e.retryAfterSeconds } : undefined;
  return {
    status: e.status,
    headers: retryAfter(e, {}),
    body: { ok: false, error_code: e.status, description: botDescription(e), ...(parameters ? { parameters } : {}) },
  };
}

/** Framework refusals in the Bot API's words; never a 500 for bad input. */
export function botFrameworkRefusal(error: Error, status: number): GatehouseError {
  const code = (error as { code?: string }).code;
  if (status === 413) return new GatehouseError('invalid_request', undefined, { status: 413 });
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return invalidRequest("can't parse JSON object");
  if (status === 415) return invalidRequest('unsupported Content-Type');
  return invalidRequest(error.message || 'invalid request');
}

/**
 * Headers for every HTML page: no framing (clickjacking, RFC 6819 §4.4.1.9),
 * no referrer leaking codes or state (RFC 9700 §4.2.4), no caching, and a CSP
 * that allows only our own stylesheet. `form-action` is left out on purpose:
 * browsers apply it to the redirect after the consent form, which must be
 * allowed to reach the client's redirect URI.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

export function sendAnswer(reply: FastifyReply, a: ErrorAnswer): FastifyReply {
  reply.code(a.status).headers(a.headers);
  return typeof a.body === 'string' ? reply.send(a.body) : reply.type('application/json').send(a.body);
}

export type Shape = (e: GatehouseError, req: FastifyRequest) => ErrorAnswer;

/** A Fastify error handler answering every error in one shape. */
export function handlerFor(shape: Shape, framework?: (error: Error, status: number) => GatehouseError) {
  return (error: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply =>
    sendAnswer(reply, shape(toGatehouseError(error, req.log, framework), req));
}

/** Sends one error in one shape, outside an error handler (a route's own catch, a not-found handler). */
export function sendError(reply: FastifyReply, shape: Shape, error: unknown): FastifyReply {
  return sendAnswer(reply, shape(toGatehouseError(error, reply.log), reply.request));
}
