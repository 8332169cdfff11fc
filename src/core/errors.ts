/**
 * The one error type for every failure that becomes an HTTP answer. `code` is
 * the RFC error code where one exists (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1;
 * RFC 7009 §2.2.1; OpenID Connect Core §3.1.2.6) or a Gatehouse code for the
 * admin, Bot API and chat client surfaces (`not_found`, `conflict`, …);
 * `description` is safe to show to the client; `detail` goes to the log only.
 * Each surface turns it into its own shape in one place (src/http/errors.ts,
 * docs/architecture.md "Errors"). Anything else thrown is an internal failure
 * and answers 500 `server_error` without detail.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'unsupported_token_type'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'slow_down'
  // RFC 7591 §3.2.2: dynamic client registration refused the metadata.
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'unapproved_software_statement'
  // RFC 8707 §2, RFC 8693 §2.2.2: a resource or audience the server will not issue a token for.
  | 'invalid_target'
  // RFC 8628 §3.5 and OpenID Connect CIBA Core §11, §13: polling and back-channel requests.
  | 'authorization_pending'
  | 'expired_token'
  | 'unknown_user_id'
  | 'invalid_binding_message'
  // RFC 9449 §5, §7.1, §8: a DPoP proof that fails the checks, or one without the server's nonce.
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  // OpenID Connect Core §3.1.2.6, answered by redirect when prompt=none cannot be honoured.
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  // OpenID Connect Core 1.0 errata set 2 §3.1.2.6, RFC 9470 §4: acr_values that cannot be met.
  | 'unmet_authentication_requirements'
  // RFC 9470 §3: the resource needs a stronger or more recent authentication of the person.
  | 'insufficient_user_authentication'
  // OpenID Connect Core §6.4 and RFC 9101 §6: a request object that fails its checks, a request_uri not served.
  | 'invalid_request_object'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  // Gatehouse codes: the admin API, the Bot API and the chat client API.
  | 'not_found'
  | 'conflict'
  | 'too_many_requests'
  | 'method_not_allowed'
  | 'not_implemented';

/** The older name of `ErrorCode`, kept for extension grants written against it. */
export type OAuthErrorCode = ErrorCode;

const defaultStatus: Record<ErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  server_error: 500,
  temporarily_unavailable: 503,
  unsupported_token_type: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  slow_down: 429,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  unapproved_software_statement: 400,
  invalid_target: 400,
  authorization_pending: 400,
  expired_token: 400,
  unknown_user_id: 400,
  invalid_binding_message: 400,
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  login_required: 400,
  consent_required: 400,
  interaction_required: 400,
  unmet_authentication_requirements: 400,
  insufficient_user_authentication: 401,
  invalid_request_object: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
  not_found: 404,
  conflict: 409,
  too_many_requests: 429,
  method_not_allowed: 405,
  not_implemented: 501,
};

/**
 * What a `WWW-Authenticate` challenge needs beyond the code and description.
 * `Basic`: RFC 6749 §5.2 (a failed client authentication through the header).
 * `Bearer`: RFC 6750 §3; `bare` sends only the realm (no credentials were
 * presented, §3.1 last paragraph), `scope` names the scope that would be enough;
 * `acrValues` and `maxAge` what authentication would (RFC 9470 §3).
 * `none`: no challenge where the code would otherwise bring one.
 */
export type Challenge =
  | { scheme: 'Basic' }
  | { scheme: 'Bearer'; realm?: string; scope?: string; bare?: boolean; dpop?: DpopChallenge; acrValues?: string; maxAge?: number }
  | { scheme: 'none' };

/**
 * RFC 9449 §7.1: a resource that accepts DPoP answers a `DPoP` challenge with
 * the algorithms it takes beside the Bearer one; when the request used the
 * DPoP scheme the error goes on the DPoP challenge (`primary`). `nonce` is
 * sent as the `DPoP-Nonce` header (§9).
 */
export interface DpopChallenge {
  algs: readonly string[];
  primary: boolean;
  nonce?: string;
}

/** Where a failed authorization request is answered by redirect (RFC 6749 §4.1.2.1, §4.2.2.1). */
export interface ErrorRedirect {
  redirectUri: string;
  mode: 'query' | 'fragment';
  state: string | undefined;
}

export interface ErrorOptions {
  /** The HTTP status, when not the code's usual one. */
  status?: number;
  /** For the log only, never shown to the client. */
  detail?: string;
  /** `Retry-After` in seconds (RFC 9110 §10.2.3). */
  retryAfterSeconds?: number;
  challenge?: Challenge;
  /** The heading of the HTML page that shows this error to a person. */
  title?: string;
  /** The client's verified redirect URI, when the authorization endpoint may answer there. */
  redirect?: ErrorRedirect;
  cause?: unknown;
}

export class GatehouseError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly detail: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly challenge: Challenge | undefined;
  readonly title: string | undefined;
  readonly redirect: ErrorRedirect | undefined;

  /** `options` may be a bare status, as `OAuthError` took it. */
  constructor(code: ErrorCode, readonly description?: string, opts: ErrorOptions | number = {}) {
    const options = typeof opts === 'number' ? { status: opts } : opts;
    super(description ?? code, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatehouseError';
    this.code = code;
    this.status = options.status ?? defaultStatus[code];
    this.detail = options.detail;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.challenge = options.challenge;
    this.title = options.title;
    this.redirect = options.redirect;
  }

  /** The RFC 6749 §5.2 name of `code`. */
  get error(): ErrorCode {
    return this.code;
  }

  /** A copy with more options (as fosite's builders return copies), e.g. the redirect once it is known. */
  with(options: ErrorOptions): GatehouseError {
    return new GatehouseError(this.code, this.description, {
      status: this.status, detail: this.detail, retryAfterSeconds: this.retryAfterSeconds, challenge: this.challenge,
      title: this.title, redirect: this.redirect, cause: this.cause, ...options,
    });
  }

  /** RFC 6749 §5.2 body. */
  toJSON(): { error: string; error_description?: string } {
    return this.description ? { error: this.code, error_description: this.description } : { error: this.code };
  }
}

/** The older name of `GatehouseError`, kept for extension grants written against it (src/index.ts). */
export const OAuthError = GatehouseError;
export type OAuthError = GatehouseError;

// One constructor per code. The description is public: put internals in `detail`.
export const invalidRequest = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_request', d, o);
/** RFC 6749 §5.2: 401, with a Basic challenge unless `challenge` says otherwise. */
export const invalidClient = (d = 'client authentication failed', o?: ErrorOptions) => new GatehouseError('invalid_client', d, o);
export const invalidGrant = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_grant', d, o);
export const invalidScope = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_scope', d, o);
export const unauthorizedClient = (d: string, o?: ErrorOptions) => new GatehouseError('unauthorized_client', d, o);
export const unsupportedGrantType = (d: string) => new GatehouseError('unsupported_grant_type', d);
export const unsupportedResponseType = (d: string) => new GatehouseError('unsupported_response_type', d);
/** RFC 6750 §3.1: 401 with a Bearer challenge carrying the code. */
export const invalidToken = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_token', d, o);
/** No credentials at all: 401 with a bare Bearer challenge (RFC 6750 §3.1, last paragraph). */
export const missingToken = () => new GatehouseError('invalid_token', 'an access token is required', { challenge: { scheme: 'Bearer', bare: true } });
/** 403 with the scope that would have been enough (RFC 6750 §3, `scope` attribute). */
export const insufficientScope = (needed: readonly string[]) =>
  new GatehouseError('insufficient_scope', `the access token needs the scope: ${needed.join(' ')}`, { challenge: { scheme: 'Bearer', scope: needed.join(' ') } });
/** RFC 9449 §5 (token endpoint, 400) and §7.1 (resource, 401 with a DPoP challenge). */
export const invalidDpopProof = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_dpop_proof', d, o);
/** RFC 9449 §8, §9: the proof lacks the nonce the server demands; the answer carries a fresh one. */
export const useDpopNonce = (d: string, o?: ErrorOptions) => new GatehouseError('use_dpop_nonce', d, o);
/** RFC 7591 §3.2.2. */
export const invalidClientMetadata = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_client_metadata', d, o);
export const invalidRedirectUri = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_redirect_uri', d, o);
/** RFC 8707 §2: a resource that is malformed, unknown or not allowed to the client. */
export const invalidTarget = (d: string, o?: ErrorOptions) => new GatehouseError('invalid_target', d, o);
export const accessDenied = (d: string, o?: ErrorOptions) => new GatehouseError('access_denied', d, o);
export const notFound = (d: string, o?: ErrorOptions) => new GatehouseError('not_found', d, o);
export const conflict = (d: string, o?: ErrorOptions) => new GatehouseError('conflict', d, o);
export const serverError = (detail?: string) => new GatehouseError('server_error', 'internal error', { detail });
/** Something we depend on (a provider, the authorization server) could not be reached: not the client's fault. */
export const temporarilyUnavailable = (d: string, o?: ErrorOptions) => new GatehouseError('temporarily_unavailable', d, o);

/**
 * A refusal to evaluate a credential until a throttle's window ends (RFC 6585
 * §4: 429, with `Retry-After`). The body keeps the endpoint's error code, so a
 * client that knows only RFC 6749 §5.2 still reads it as a failed authentication.
 */
export const tooManyAttempts = (code: ErrorCode, description: string, retryAfterSeconds: number) =>
  new GatehouseError(code, description, { status: 429, retryAfterSeconds, challenge: { scheme: 'none' } });
