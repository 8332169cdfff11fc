import { temporarilyUnavailable } from '../errors.js';

/**
 * Resource-server failures (RFC 6750 §3.1) are `GatehouseError`s made by the
 * constructors in core/errors.ts (`invalidToken`, `missingToken`,
 * `insufficientScope`); src/http/errors.ts `bearerAnswer` turns any of them
 * into the `WWW-Authenticate: Bearer …` answer the RFC requires.
 */
export { insufficientScope, invalidToken, missingToken } from '../errors.js';

/** The authorization server (JWKS, introspection) could not be reached: not the client's fault. */
export const unavailable = (description: string) => temporarilyUnavailable(description, { retryAfterSeconds: 5 });
