import type { IncomingMessage, ServerResponse } from 'node:http';
import { invalidRequest, missingToken } from '../core/errors.js';
import { requireMembership, type StepUpRule } from '../core/resource/step-up.js';
import type { Params } from '../core/params.js';
import { bearerErrorResponse } from '../http/errors.js';
import type { VerifiedToken } from '../core/resource/token.js';
import { BearerGuard, type GatehouseAuthOptions, type ScopeSpec } from './options.js';
import { withResourceMetadata } from '../core/oauth/resource-metadata.js';

/** A Node request as Express and Connect see it: `body` set by a body parser, if one ran. */
export type GuardedRequest = IncomingMessage & { auth?: VerifiedToken; body?: unknown; _body?: boolean };
export type Next = (err?: unknown) => void;

const BODY_LIMIT = 64 * 1024;

function toParams(search: URLSearchParams): Params {
  // No prototype: a name such as `__proto__` or `constructor` in the query is a parameter like any other.
  const out = Object.create(null) as Params;
  for (const [k, v] of search) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

const isForm = (req: IncomingMessage) => req.headers['content-type']?.split(';')[0]!.trim().toLowerCase() === 'application/x-www-form-urlencoded';

/**
 * Reads a form body no parser has read yet (plain Node), leaving it on
 * `req.body` as Express's urlencoded parser would, so handlers still see it.
 */
async function readForm(req: GuardedRequest): Promise<void> {
  if (req.body !== undefined || req._body || req.method === 'GET' || req.method === 'HEAD' || !isForm(req)) return;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw invalidRequest('request body too large');
    chunks.push(chunk as Buffer);
  }
  req.body = toParams(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
  req._body = true;
}

export function sendBearerError(res: ServerResponse, err: unknown, realm: string, resourceMetadataUrl?: string): void {
  const r = bearerErrorResponse(err, realm);
  const challenge = r.headers['www-authenticate'];
  // RFC 9728 §5.1: point the client at the API's metadata.
  const headers = resourceMetadataUrl && challenge ? { ...r.headers, 'www-authenticate': withResourceMetadata(challenge, resourceMetadataUrl) } : r.headers;
  res.writeHead(r.status, { ...headers, 'content-type': 'application/json' }).end(JSON.stringify(r.body));
}

/**
 * Connect-style middleware for plain Node and Express:
 *
 *   const requireToken = gatehouseMiddleware({ issuer, audience });
 *   app.get('/notes', requireToken('notes:read'), handler);   // req.auth is the token
 *
 * A failed check answers right away (RFC 6750 §3) and does not call `next`.
 * `stepUp` (`{ acr, maxAge }`, RFC 9470) replaces the options' for one route.
 */
export function gatehouseMiddleware(opts: GatehouseAuthOptions) {
  const guard = new BearerGuard(opts);
  return (scope?: ScopeSpec, stepUp?: StepUpRule) => (req: GuardedRequest, res: ServerResponse, next: Next): void => {
    (async () => {
      await readForm(req);
      req.auth = await guard.authenticate({
        method: req.method ?? 'GET',
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        // Our own parse, not Express's `req.query` (qs would turn `a[b]=` into objects).
        query: toParams(new URL(req.url ?? '/', 'http://localhost').searchParams),
        body: req.body,
        clientCertThumbprint: guard.clientCertificate(req),
        dpop: req.headers.dpop,
        url: guard.requestUrl(req),
      }, scope, ...(stepUp ? [stepUp] : []));
    })().then(() => next(), (e: unknown) => sendBearerError(res, e, guard.realm, guard.resourceMetadata?.url));
  };
}

function membership(claim: 'roles' | 'groups', name: string, realm: string) {
  return (req: GuardedRequest, res: ServerResponse, next: Next): void => {
    try {
      if (!req.auth) throw missingToken();
      requireMembership(req.auth, claim, name);
    } catch (e) {
      sendBearerError(res, e, realm);
      return;
    }
    next();
  };
}

/**
 * After the token middleware: the token must carry `roles` with `name`
 * (scope `roles`); otherwise 403 `insufficient_scope` (RFC 6750 §3.1).
 *
 *   app.post('/deploy', requireToken('roles'), requireRole('deployer'), handler);
 */
export const requireRole = (name: string, realm = 'gatehouse') => membership('roles', name, realm);
/** As `requireRole`, for the `groups` claim (scope `groups`). */
export const requireGroup = (name: string, realm = 'gatehouse') => membership('groups', name, realm);
