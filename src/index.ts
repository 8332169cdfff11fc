/**
 * Gatehouse as a library: start it in-process, register extension grants,
 * reach its stores. `gatehouse serve` is this plus signal handling.
 */
export { loadConfig, type Config } from './config.js';
export { startGatehouse, type RunningGatehouse } from './server.js';
export type { Gatehouse } from './gatehouse.js';
export type { Grant, GrantDeps, GrantRequest } from './core/oauth/grants/grant.js';
export { mayRefresh } from './core/oauth/grants/grant.js';
export type { TokenResponse } from './core/oauth/tokens.js';
export { GatehouseError, OAuthError, invalidGrant, invalidRequest, invalidScope, type ErrorCode } from './core/errors.js';
export { required, single, type Params } from './core/params.js';
export { resolveScope, parseScope, formatScope } from './core/scope.js';
