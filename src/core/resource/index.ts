/** The resource-server side of OAuth (RFC 6750, RFC 9068 §4, RFC 7662 as a client), framework-free. */
export { extractBearerToken, type BearerRequest } from './bearer.js';
export { insufficientScope, invalidToken, missingToken, unavailable } from './errors.js';
export { requireScope, scopeRule, type ScopeRule } from './scope.js';
export type { AccessTokenVerifier, VerifiedToken } from './token.js';
export { CachedVerifier, TokenRouter } from './cache.js';
export { RemoteJwks, type KeySource, type PublicKey, type RemoteJwksOptions } from './jwks.js';
export { JwtVerifier, type JwtVerifierOptions } from './jwt.js';
export { IntrospectionVerifier, type IntrospectionOptions } from './introspection.js';
export { TableVerifier } from './table.js';
export { PROFILE_SCOPES, userProfile } from './profile.js';
