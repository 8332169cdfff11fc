import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatehouseError } from '../../core/errors.js';
import type { Params } from '../../core/params.js';
import { authenticateClient } from '../../core/oauth/client-auth.js';
import { introspect, revoke } from '../../core/oauth/introspection.js';
import type { Gatehouse } from '../../gatehouse.js';
import { formParams, noStore } from '../common.js';
import { clientCertificateReader } from '../tls.js';
import { PARAMS, formBody } from '../input.js';
import { parMetadata } from '../../core/oauth/par.js';
import { ACCEPTED_ALGORITHMS, HMAC_ALGORITHMS } from '../../core/jwt-verify.js';
import { parRoutes } from './par-routes.js';
import { registrationMetadata } from '../../core/oauth/registration.js';
import { backchannelMetadata } from '../../core/oauth/ciba-options.js';
import { DPOP_ALGORITHMS } from '../../core/oauth/dpop.js';

export const AUTHORIZE_PATHS = ['/login/oauth/authorize', '/oauth2'] as const;
export const TOKEN_PATHS = ['/login/oauth/access_token', '/oauth/token'] as const;

/** RFC 8414 §2 metadata. */
export function metadata(gh: Gatehouse): Record<string, unknown> {
  const iss = gh.oauth.issuer;
  const grantTypes = [...gh.tokenEndpoint.grantTypes, 'implicit'];
  return {
    issuer: iss,
    authorization_endpoint: `${iss}${AUTHORIZE_PATHS[0]}`,
    token_endpoint: `${iss}${TOKEN_PATHS[1]}`,
    jwks_uri: `${iss}/.well-known/jwks.json`,
    response_types_supported: ['code', 'token'],
    response_modes_supported: ['query', 'fragment'],
    grant_types_supported: grantTypes,
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'self_signed_tls_client_auth', 'private_key_jwt', 'client_secret_jwt'],
    // RFC 7523 §2.2 assertions: asymmetric algorithms for private_key_jwt, HMAC for client_secret_jwt only (docs/security.md).
    token_endpoint_auth_signing_alg_values_supported: [...ACCEPTED_ALGORITHMS, ...HMAC_ALGORITHMS],
    code_challenge_methods_supported: ['S256'],
    introspection_endpoint: `${iss}/oauth/check_token`,
    introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'self_signed_tls_client_auth'],
    revocation_endpoint: `${iss}/oauth/revoke`,
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'self_signed_tls_client_auth'],
    authorization_response_iss_parameter_supported: true,
    // RFC 8705 §3.3: tokens of clients that authenticate with a certificate are bound to it.
    tls_client_certificate_bound_access_tokens: true,
    // RFC 9449 §5.1.
    dpop_signing_alg_values_supported: DPOP_ALGORITHMS,
    service_documentation: `${iss}/`,
    // RFC 9126 §5.
    ...parMetadata(iss, gh.par.required),
    // RFC 8414 §2, RFC 7591 §3: only when registration is on.
    ...registrationMetadata(iss, gh.registration.enabled),
    // RFC 8628 §4 and OpenID Connect CIBA Core §4.
    ...backchannelMetadata(iss),
  };
}

export async function oauthRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const clientCert = clientCertificateReader(gh.config);
  const json = { kind: 'json' as const };
  // RFC 6749 appendix B: every parameter is a string; which names a grant reads is its own table.
  const form = { config: json, schema: { body: formBody(PARAMS) } };

  const token = async (req: FastifyRequest, reply: FastifyReply) => {
    noStore(reply);
    const params = req.method === 'GET' ? (req.query as Params) : formParams(req);
    return gh.tokenEndpoint.handle({
      params, authorization: req.headers.authorization, address: req.ip, clientCertThumbprint: clientCert(req.raw),
      // RFC 9449 §4.3: htu is the URL the client sent the request to, under the public issuer URL.
      dpop: { proof: req.headers.dpop, method: req.method, url: `${gh.oauth.issuer}${req.routeOptions.url ?? ''}` },
    });
  };
  for (const url of TOKEN_PATHS) {
    app.post(url, form, token);
    // RFC 6749 §3.2 requires POST; GET (credentials in URLs and logs) only when a deployment opts in.
    app.get(url, { config: json, schema: { querystring: PARAMS } }, async (req, reply) => {
      if (gh.config.tokenEndpointGet) return token(req, reply);
      reply.header('allow', 'POST');
      throw new GatehouseError('invalid_request', 'the token endpoint accepts POST only', 405);
    });
  }

  app.post('/oauth/check_token', form, async (req, reply) => {
    noStore(reply);
    return introspect({ params: formParams(req), authorization: req.headers.authorization, address: req.ip, clientCertThumbprint: clientCert(req.raw) }, { ...gh, inspector: gh.inspector, config: gh.oauth });
  });

  app.post('/oauth/revoke', form, async (req, reply) => {
    noStore(reply);
    await revoke({ params: formParams(req), authorization: req.headers.authorization, address: req.ip, clientCertThumbprint: clientCert(req.raw) }, gh);
    return reply.code(200).send();
  });

  await parRoutes(app, gh);

  const wellKnownMeta = async () => metadata(gh);
  app.get('/.well-known/oauth-authorization-server', { config: json }, wellKnownMeta);
  app.get('/.well-known/jwks.json', { config: json }, async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return gh.keys.jwks();
  });

  // The token_key endpoint (the JWKS under the name older OAuth servers used) is closed by default:
  // callers authenticate as a client, so it cannot be used to scan (docs/security.md, Token scanning).
  app.get('/oauth/token_key', { config: json }, async (req) => {
    if (!gh.config.openTokenKey) {
      await authenticateClient(gh.storage.clients, { authorization: req.headers.authorization, params: {}, address: req.ip, clientCertThumbprint: clientCert(req.raw) }, gh.clock.now(), gh.clientThrottle);
    }
    return gh.keys.jwks();
  });
}
