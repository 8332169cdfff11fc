/**
 * Protect your own API with Gatehouse access tokens (`gatehouse/middleware`).
 *
 *   // Fastify: every route registered in this context needs a token
 *   await app.register(gatehouseFastify, { issuer: 'https://auth.example.com', audience: 'https://api.example.com' });
 *   app.get('/notes', { config: { auth: { scope: 'notes:read' } } }, async (req) => ({ owner: req.auth!.subject }));
 *
 *   // Express or plain Node
 *   const requireToken = gatehouseMiddleware({ issuer, audience });
 *   app.get('/notes', requireToken('notes:read'), (req, res) => res.json({ owner: req.auth.subject }));
 */
export { gatehouseFastify, sendBearerError as sendFastifyBearerError, type RouteAuth } from './fastify.js';
export { gatehouseMiddleware, requireGroup, requireRole, type GuardedRequest } from './node.js';
export { requireAuthentication, requireMembership, type StepUpRule } from '../core/resource/step-up.js';
export { gatehouseResourceMetadata, type ResourceMetadataOption } from './resource-metadata.js';
export { BearerGuard, createVerifier, type GatehouseAuthOptions, type ScopeSpec } from './options.js';
export {
  CachedVerifier, IntrospectionVerifier, JwtVerifier, RemoteJwks, TableVerifier, TokenRouter, extractBearerToken,
  type AccessTokenVerifier, type VerifiedToken,
} from '../core/resource/index.js';
export { bearerErrorResponse, type ErrorAnswer as BearerErrorResponse } from '../http/errors.js';
