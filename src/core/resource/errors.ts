import { OAuthError } from '../errors.js';

/**
 * Resource-server failures (RFC 6750 §3.1). They are `OAuthError`s, so the
 * code and status travel together; `bearerChallenge` turns any of them into
 * the `WWW-Authenticate: Bearer …` header the RFC requires.
 */

/** No credentials at all: 401 with a bare challenge, no error code (RFC 6750 §3.1, last paragraph). */
export class MissingTokenError extends OAuthError {
  constructor() {
    super('invalid_token', 'an access token is required', 401);
  }
}

/** 403 with the scope that would have been enough (RFC 6750 §3, `scope` attribute). */
export class InsufficientScopeError extends OAuthError {
  constructor(readonly needed: readonly string[]) {
    super('insufficient_scope', `the access token needs the scope: ${needed.join(' ')}`);
  }
}

export const invalidToken = (description: string) => new OAuthError('invalid_token', description);

/** The authorization server (JWKS, introspection) could not be reached: not the client's fault. */
export const unavailable = (description: string) => new OAuthError('temporarily_unavailable', description, 503);

/** RFC 6750 §3: attribute values are quoted-strings limited to %x20-21 / %x23-5B / %x5D-7E. */
function quoted(value: string): string {
  return `"${value.replace(/[^\x20\x21\x23-\x5B\x5D-\x7E]/g, '')}"`;
}

export interface BearerErrorResponse {
  status: number;
  headers: Record<string, string>;
  body: Record<string, string>;
}

/**
 * The full response for a failed request to a protected resource: status,
 * `WWW-Authenticate` challenge, no caching, and a JSON body repeating the
 * error. Anything that is not an `OAuthError` is an internal failure and
 * answers 500 `server_error` without detail.
 */
export function bearerErrorResponse(err: unknown, realm: string): BearerErrorResponse {
  const e = err instanceof OAuthError ? err : new OAuthError('server_error', 'internal error');
  const headers: Record<string, string> = { 'cache-control': 'no-store', pragma: 'no-cache' };
  const attrs = [`realm=${quoted(realm)}`];
  if (e instanceof MissingTokenError) {
    headers['www-authenticate'] = `Bearer ${attrs.join(', ')}`;
    return { status: 401, headers, body: { error_description: e.description! } };
  }
  if (e.error === 'invalid_request' || e.error === 'invalid_token' || e.error === 'insufficient_scope') {
    attrs.push(`error=${quoted(e.error)}`);
    if (e.description) attrs.push(`error_description=${quoted(e.description)}`);
    if (e instanceof InsufficientScopeError) attrs.push(`scope=${quoted(e.needed.join(' '))}`);
    headers['www-authenticate'] = `Bearer ${attrs.join(', ')}`;
  }
  if (e.status === 503) headers['retry-after'] = '5';
  return { status: e.status, headers, body: e.toJSON() };
}
