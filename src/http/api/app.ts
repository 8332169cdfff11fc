import type { FastifyBaseLogger, FastifyInstance, FastifyServerFactory } from 'fastify';
import { baseApp } from '../base-app.js';
import { invalidRequest } from '../../core/errors.js';
import { invalidToken } from '../../core/resource/errors.js';
import { PROFILE_SCOPES, userProfile } from '../../core/resource/profile.js';
import type { AccessTokenVerifier } from '../../core/resource/token.js';
import type { Gatehouse } from '../../gatehouse.js';
import { accountUsable } from '../../core/account-lock.js';
import { gatehouseFastify, sendBearerError } from '../../middleware/fastify.js';
import { apiResourceMetadata } from './resource-metadata.js';
import { clientCertificateReader } from '../tls.js';
import { BEARER_CORS, readiness } from '../common.js';
import { bearerAnswer, handlerFor } from '../errors.js';
import { PARAMS, formBody, validateWithZod } from '../input.js';

const REALM = 'gatehouse';

/** Builds the resource server ({api_url}); never listens. */
export async function buildApiServer(gh: Gatehouse, verifier: AccessTokenVerifier, logger?: FastifyBaseLogger, serverFactory?: FastifyServerFactory): Promise<FastifyInstance> {
  const app = await baseApp(gh, 'api', {
    logger, serverFactory, https: true,
    bodyLimit: 16 * 1024,
    // A path the router cannot decode (`/user/%ZZ`): RFC 6750 §3.1 invalid_request, not fastify's own body.
    frameworkErrors: (_err, _req, reply) => {
      sendBearerError(reply, invalidRequest('malformed request path'), REALM);
    },
  });
  validateWithZod(app);
  // Malformed bodies, unsupported media types, oversize: invalid_request with a challenge (RFC 6750 §3.1).
  app.setErrorHandler(handlerFor((e) => bearerAnswer(e, REALM)));
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'not_found', error_description: 'no resource at this address' }));
  app.addHook('onRequest', async (_req, reply) => {
    reply.headers(BEARER_CORS);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  // RFC 9728: the metadata document, and `resource_metadata` in every challenge below.
  apiResourceMetadata(app, gh);
  app.get('/readyz', (_req, reply) => readiness(gh, reply));
  app.options('/user', async (_req, reply) => reply.code(204).send());

  await app.register(async (api) => {
    await api.register(gatehouseFastify, { issuer: gh.oauth.issuer, audience: gh.oauth.audience, realm: REALM, verifier,
      clientCertificate: clientCertificateReader(gh.config),
      // RFC 9449 §7.1: proofs name {api_url}'s public URL; their jtis go to the table the token endpoint uses.
      dpop: { verifier: gh.dpop, url: (raw) => `${gh.oauth.audience.replace(/\/+$/, '')}${raw.url ?? '/'}` } });
    const config = { auth: { scope: { any: PROFILE_SCOPES } } };
    const user = async (req: import('fastify').FastifyRequest) => {
      const token = req.auth!;
      // A client acting for itself, or a deleted user: this token stands for no one signed in.
      const found = token.userId ? await gh.storage.users.get(token.userId) : undefined;
      if (!found) throw invalidToken('the access token does not belong to a user');
      // A locked account's tokens are refused, self-contained ones too, and after an unlock those
      // issued before the lock: the user row read here tells both (src/core/account-lock.ts).
      if (!accountUsable(found, { iat: token.iat })) throw invalidToken(found.lockedAt != null ? 'the account is locked' : 'the token was issued before the account was locked');
      return userProfile(found, token.scope);
    };
    // RFC 6750 §2.2, §2.3: the token may come as a form field or a query parameter, each a string.
    api.get('/user', { config, schema: { querystring: PARAMS } }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return user(req);
    });
    api.post('/user', { config, schema: { querystring: PARAMS, body: formBody(PARAMS) } }, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return user(req);
    });
  });
  return app;
}
