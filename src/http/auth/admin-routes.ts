import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createClient, createUser, describeClient, InputError, rotateClientSecret, type ClientInput } from '../../core/admin.js';
import { safeEqual } from '../../core/crypto.js';
import { OAuthError } from '../../core/errors.js';
import type { Gatehouse } from '../../gatehouse.js';
import { UsernameTakenError } from '../../store/index.js';
import { noStore } from '../common.js';
import { webhookRoutes } from './webhook-routes.js';

const asBody = (req: FastifyRequest): Record<string, unknown> => {
  const b = req.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new InputError('the body must be a JSON object');
  return b as Record<string, unknown>;
};

const strings = (v: unknown, name: string): string[] | undefined => {
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v.split(/[ ,]+/).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw new InputError(`${name} must be a string or an array of strings`);
};

/** The client registration fields the admin API accepts (RFC 7591 names). */
export function clientInputFrom(b: Record<string, unknown>): ClientInput {
  const opt = (name: string) => {
    const v = b[name];
    if (v !== undefined && v !== null && typeof v !== 'string') throw new InputError(`${name} must be a string`);
    return v as string | undefined;
  };
  const flagOf = (name: string) => {
    const v = b[name];
    if (v !== undefined && typeof v !== 'boolean') throw new InputError(`${name} must be a boolean`);
    return v as boolean | undefined;
  };
  return {
    name: opt('client_name') ?? opt('name') ?? '',
    redirectUris: strings(b.redirect_uris, 'redirect_uris') ?? [],
    grantTypes: strings(b.grant_types, 'grant_types'),
    scope: opt('scope'),
    public: flagOf('public'),
    authMethod: opt('token_endpoint_auth_method'),
    trusted: flagOf('trusted'),
    introspect: flagOf('introspect'),
    domain: opt('domain'),
    tokenFormat: opt('token_format'),
    // OpenID Connect RP-Initiated Logout 1.0 §3.1 and Back-Channel Logout 1.0 §2.2 registration names.
    postLogoutRedirectUris: strings(b.post_logout_redirect_uris, 'post_logout_redirect_uris'),
    backchannelLogoutUri: opt('backchannel_logout_uri'),
    // RFC 8705 (PEM certificate or its x5t#S256) and the address allow-list (spec §5.1).
    tlsClientCertificate: opt('tls_client_certificate'),
    tlsClientCertificateThumbprint: opt('tls_client_certificate_thumbprint'),
    allowedAddresses: strings(b.allowed_addresses, 'allowed_addresses'),
  };
}

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
    if (!adminToken || !m || !safeEqual(m[1]!, adminToken)) {
      reply.header('www-authenticate', 'Bearer realm="gatehouse-admin"');
      throw new OAuthError('invalid_token', adminToken ? 'admin credential required' : 'the admin API is disabled (set GATEHOUSE_ADMIN_TOKEN)', 401);
    }
  });
  app.setErrorHandler((err, req, reply) => {
    if (err instanceof InputError || err instanceof UsernameTakenError) return reply.code(400).send({ error: 'invalid_request', error_description: err.message });
    throw err;
  });

  app.post('/clients', async (req, reply) => {
    const { client, secret } = await createClient(gh.storage, gh.clock, clientInputFrom(asBody(req)));
    return reply.code(201).send(describeClient(client, secret));
  });
  app.get('/clients', async () => ({ clients: (await gh.storage.clients.list()).map((c) => describeClient(c)) }));
  app.get<{ Params: { id: string } }>('/clients/:id', async (req, reply) => {
    const c = await gh.storage.clients.get(req.params.id);
    return c ? describeClient(c) : reply.code(404).send({ error: 'not_found', error_description: 'unknown client' });
  });
  app.delete<{ Params: { id: string } }>('/clients/:id', async (req, reply) =>
    (await gh.storage.clients.delete(req.params.id)) ? reply.code(204).send() : reply.code(404).send({ error: 'not_found', error_description: 'unknown client' }));
  app.post<{ Params: { id: string } }>('/clients/:id/secret', async (req) => {
    const secret = await rotateClientSecret(gh.storage, gh.clock, req.params.id, gh.oauth.secretRotationGrace);
    return { client_id: req.params.id, client_secret: secret, previous_secret_valid_for: gh.oauth.secretRotationGrace };
  });
  app.post('/users', async (req, reply) => {
    const b = asBody(req);
    const str = (k: string) => (typeof b[k] === 'string' ? (b[k] as string) : '');
    const user = await createUser(gh.storage, gh.hasher, gh.clock, { username: str('username'), email: str('email'), password: str('password'), name: str('name') || null });
    return reply.code(201).send({ id: user.id, username: user.username, email: user.email });
  });
  app.post('/keys/rotate', async () => {
    const key = await gh.keys.rotate(gh.clock.now() + gh.oauth.accessTokenTtl * 1000 + 60_000);
    return { kid: key.kid, alg: key.alg };
  });
  // Webhook endpoints, delivery log and replay (a child context: the bearer check above applies).
  await app.register(async (child) => webhookRoutes(child, gh));
}
