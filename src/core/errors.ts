/**
 * One error type for the whole protocol core. `error` is the RFC error code
 * (RFC 6749 §4.1.2.1, §5.2; RFC 6750 §3.1; RFC 7009 §2.2.1); `description` is
 * safe to show to the client. Anything else thrown is an internal failure and
 * the HTTP edge turns it into `server_error` without detail.
 */
export type OAuthErrorCode =
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
  // OpenID Connect Core §3.1.2.6, answered by redirect when prompt=none cannot be honoured.
  | 'login_required'
  | 'consent_required'
  | 'interaction_required';

const defaultStatus: Record<OAuthErrorCode, number> = {
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
  login_required: 400,
  consent_required: 400,
  interaction_required: 400,
};

export class OAuthError extends Error {
  readonly status: number;
  constructor(
    readonly error: OAuthErrorCode,
    readonly description?: string,
    status?: number,
  ) {
    super(description ? `${error}: ${description}` : error);
    this.name = 'OAuthError';
    this.status = status ?? defaultStatus[error];
  }

  /** RFC 6749 §5.2 body. */
  toJSON(): { error: string; error_description?: string } {
    return this.description ? { error: this.error, error_description: this.description } : { error: this.error };
  }
}

export const invalidRequest = (d: string) => new OAuthError('invalid_request', d);
export const invalidClient = (d = 'client authentication failed') => new OAuthError('invalid_client', d);
export const invalidGrant = (d: string) => new OAuthError('invalid_grant', d);
export const invalidScope = (d: string) => new OAuthError('invalid_scope', d);
