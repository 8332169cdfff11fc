import { OAuthError, type OAuthErrorCode } from '../errors.js';

/**
 * A third-party sign-in that cannot go on. It is an `OAuthError` (so a caller
 * that does not know it still answers in RFC shape), with a page title for
 * the person: `description` is shown to them, never a provider's raw reply.
 */
export class FederationError extends OAuthError {
  constructor(code: OAuthErrorCode, readonly title: string, description: string, status?: number) {
    super(code, description, status);
    this.name = 'FederationError';
  }
}

/** The sign-in request itself is wrong or stale (a bad or replayed callback): 400. */
export const badSignIn = (description: string) => new FederationError('invalid_request', 'Sign-in failed', description, 400);

/** The provider could not be reached or answered nonsense: 502, not our fault and not the person's. */
export const providerFailed = (description: string) => new FederationError('temporarily_unavailable', 'Sign-in failed', description, 502);
