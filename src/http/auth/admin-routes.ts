import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { createClient, createUser, describeClient, rotateClientSecret, type ClientInput } from '../../core/admin.js';
import { safeEqual } from '../../core/crypto.js';
import { invalidToken, notFound, tooManyAttempts } from '../../core/errors.js';
import type { Gatehouse } from '../../gatehouse.js';
import { noStore } from '../common.js';
import { adminAnswer, handlerFor } from '../errors.js';
import { eventWebhookRoutes } from './event-webhook-routes.js';
import { accessAdminRoutes } from './access-admin-routes.js';
import { userAdminRoutes } from './user-admin-routes.js';
import { jsonObject, pathParams } from '../input.js';
import { CLIENT_LIST, CLIENT_OUT, CLIENT_SECRET, KEY_OUT, NO_CONTENT, USER_OUT } from './admin-schemas.js';
import { packageVersion, serveOpenApi } from './openapi.js';

const text = z.string({ error: 'must be a string' });
/** Absent or null: not given. */
const optText = text.nullish().transform((v) => v ?? undefined);
const flag = z.boolean({ error: 'must be a boolean' }).optional();
/** A JSON array of strings, or one string of space- or comma-separated items. */
const list = z.union([z.string().transform((v) => v.split(/[ ,]+/).filter(Boolean)), z.array(z.string())], { error: 'must be a string or an array of strings' }).optional();

/** The client registration fields the admin API accepts (RFC 7591 names). */
const CLIENT = jsonObject({
  client_name: optText, name: optText, redirect_uris: list, grant_types: list, scope: optText, public: flag,
  token_endpoint_auth_method: optText, trusted: flag, introspect: flag, domain: optText, token_format: optText,
  // OpenID Connect RP-Initiated Logout 1.0 §3.1 and Back-Channel Logout 1.0 §2.2 registration names.
  post_logout_redirect_uris: list, backchannel_logout_uri: optText,
  // RFC 8705 (PEM certificate or its x5t#S256) and the address allow-list (docs/oauth.md, Application-level access).
  tls_client_certificate: optText, tls_client_certificate_thumbprint: optText, allowed_addresses: list,
  // OpenID Connect Registration §2 and RFC 9126 §6.
  id_token_signed_response_alg: optText, require_pushed_authorization_requests: flag,
  // RFC 9449 §5.2.
  dpop_bound_access_tokens: flag,
  // RFC 8693: a public client may use token exchange only when the operator says so.
  public_token_exchange: flag,
  // RFC 7591 §2: a JWK Set object (or its JSON text) and its URL.
  jwks: z.union([z.string(), z.record(z.string(), z.unknown()).transform((v) => JSON.stringify(v))], { error: 'must be a JWK Set' }).optional(), jwks_uri: optText,
  // RFC 8707: resources it may ask tokens for beside the built-in API.
  resources: list,
  // OpenID Connect CIBA Core §4.
  backchannel_token_delivery_mode: optText, backchannel_client_notification_endpoint: optText,
});
const USER = jsonObject({ username: text.optional(), email: text.optional(), password: text.optional(), name: optText });
const ID = pathParams('id');

export function clientInputFrom(b: z.output<typeof CLIENT>): ClientInput {
  return {
    name: b.client_name ?? b.name ?? '',
    redirectUris: b.redirect_uris ?? [],
    grantTypes: b.grant_types,
    scope: b.scope,
    public: b.public,
    authMethod: b.token_endpoint_auth_method,
    trusted: b.trusted,
    introspect: b.introspect,
    domain: b.domain,
    tokenFormat: b.token_format,
    postLogoutRedirectUris: b.post_logout_redirect_uris,
    backchannelLogoutUri: b.backchannel_logout_uri,
    tlsClientCertificate: b.tls_client_certificate,
    tlsClientCertificateThumbprint: b.tls_client_certificate_thumbprint,
    allowedAddresses: b.allowed_addresses,
    idTokenAlg: b.id_token_signed_response_alg,
    requirePar: b.require_pushed_authorization_requests,
    dpop: b.dpop_bound_access_tokens,
    publicTokenExchange: b.public_token_exchange,
    jwks: b.jwks,
    jwksUri: b.jwks_uri,
    resources: b.resources,
    backchannelTokenDeliveryMode: b.backchannel_token_delivery_mode,
    backchannelNotificationEndpoint: b.backchannel_client_notification_endpoint,
  };
}

const tooMany = (retryAfterSeconds: number) =>
  tooManyAttempts('invalid_token', 'too many failed attempts with the admin credential; try again later', retryAfterSeconds);

/**
 * The admin HTTP API, behind `Authorization: Bearer <GATEHOUSE_ADMIN_TOKEN>`.
 * Off when no admin token is configured.
 */
export async function adminRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const adminToken = gh.config.adminToken;
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    noStore(reply);
    // RFC 7235 §2.1: the scheme is case-insensitive.
    const m = /^Bearer +(.+)$/i.exec(req.headers.authorization ?? '');
    const refuse = () => invalidToken(adminToken ? 'admin credential required' : 'the admin API is disabled (set GATEHOUSE_ADMIN_TOKEN)',
      { challenge: { scheme: 'Bearer', realm: 'gatehouse-admin', bare: true } });
    if (!adminToken || !m) throw refuse();
    // One secret, so one id: wrong tokens from anywhere lock it, and each address on its own (src/core/throttle.ts).
    const gate = await gh.adminThrottle.check('admin', req.ip);
    if (!gate.allowed) throw tooMany(gate.retryAfterSeconds);
    if (!safeEqual(m[1]!, adminToken)) {
      const verdict = await gh.adminThrottle.failed('admin', req.ip);
      throw verdict.allowed ? refuse() : tooMany(verdict.retryAfterSeconds);
    }
  });
  // Every admin route, the webhook routes registered below included: an unknown id is 404 not_found.
  app.setErrorHandler(handlerFor(adminAnswer));
  // The routes' response schemas are zod, for the document below; answers are plain JSON as before.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Behind the same bearer check as every other admin route: the document maps what the token opens.
  serveOpenApi(app, '/openapi.json', { version: packageVersion(), serverUrl: gh.config.authUrl });

  app.post('/clients', { schema: { body: CLIENT, response: { 201: CLIENT_OUT } } }, async (req, reply) => {
    const { client, secret } = await createClient(gh.storage, gh.clock, clientInputFrom(req.body as z.output<typeof CLIENT>));
    return reply.code(201).send(describeClient(client, secret));
  });
  app.get('/clients', { schema: { response: { 200: CLIENT_LIST } } }, async () => ({ clients: (await gh.storage.clients.list()).map((c) => describeClient(c)) }));
  app.get<{ Params: { id: string } }>('/clients/:id', { schema: { params: ID, response: { 200: CLIENT_OUT } } }, async (req) => {
    const c = await gh.storage.clients.get(req.params.id);
    if (!c) throw notFound('unknown client');
    return describeClient(c);
  });
  app.delete<{ Params: { id: string } }>('/clients/:id', { schema: { params: ID, response: { 204: NO_CONTENT } } }, async (req, reply) => {
    if (!(await gh.storage.clients.delete(req.params.id))) throw notFound('unknown client');
    return reply.code(204).send();
  });
  app.post<{ Params: { id: string } }>('/clients/:id/secret', { schema: { params: ID, response: { 200: CLIENT_SECRET } } }, async (req) => {
    const secret = await rotateClientSecret(gh.storage, gh.clock, req.params.id, gh.oauth.secretRotationGrace);
    return { client_id: req.params.id, client_secret: secret, previous_secret_valid_for: gh.oauth.secretRotationGrace };
  });
  app.post('/users', { schema: { body: USER, response: { 201: USER_OUT } } }, async (req, reply) => {
    const b = req.body as z.output<typeof USER>;
    const user = await createUser(gh.storage, gh.hasher, gh.clock, { username: b.username ?? '', email: b.email ?? '', password: b.password ?? '', name: b.name || null });
    return reply.code(201).send({ id: user.id, username: user.username, email: user.email });
  });
  app.post('/keys/rotate', { schema: { response: { 200: KEY_OUT } } }, async () => {
    const key = await gh.keys.rotate(gh.clock.now() + gh.oauth.accessTokenTtl * 1000 + 60_000);
    return { kid: key.kid, alg: key.alg };
  });
  // Webhook endpoints, delivery log and replay (a child context: the bearer check above applies).
  await app.register(async (child) => eventWebhookRoutes(child, gh));
  // Groups and roles (src/http/auth/access-admin-routes.ts), likewise.
  await app.register(async (child) => accessAdminRoutes(child, gh));
  // Accounts: list, new password, name and e-mail, deletion (src/http/auth/user-admin-routes.ts), likewise.
  await app.register(async (child) => userAdminRoutes(child, gh));
}
