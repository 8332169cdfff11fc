import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { OAuthError } from '../../core/errors.js';
import { invalidToken } from '../../core/resource/errors.js';
import { PROFILE_SCOPES, userProfile } from '../../core/resource/profile.js';
import type { AccessTokenVerifier } from '../../core/resource/token.js';
import type { Gatehouse } from '../../gatehouse.js';
import { gatehouseFastify, sendBearerError } from '../../middleware/fastify.js';
import { apiVerifier, lazyVerifier } from './verifier.js';
import { clientCertificateReader, httpsOptions } from '../tls.js';
import { BEARER_CORS } from '../common.js';

const REALM = 'gatehouse';

/** Builds the resource server ({api_url}); never listens. */
export async function buildApiServer(gh: Gatehouse, logger?: FastifyBaseLogger, verifier?: AccessTokenVerifier): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    // Request URLs may carry access tokens (RFC 6750 §2.3): no per-request log lines.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: gh.config.trustProxy,
    ...httpsOptions(gh.config),
    bodyLimit: 16 * 1024,
  });
  await app.register(formbody);
  // Malformed bodies, unsupported media types, oversize: invalid_request with a challenge (RFC 6750 §3.1).
  app.setErrorHandler((error, req, reply) => {
    if (error instanceof OAuthError) return sendBearerError(reply, error, REALM);
    const status = (error as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      return sendBearerError(reply, new OAuthError('invalid_request', (error as Error).message, status === 413 ? 413 : 400), REALM);
    }
    req.log.error({ err: error }, 'request failed');
    return sendBearerError(reply, error, REALM);
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ error: 'not_found', error_description: 'no resource at this address' }));
  app.addHook('onRequest', async (_req, reply) => {
    reply.headers(BEARER_CORS);
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => ((await gh.storage.ready()) ? { status: 'ready' } : reply.code(503).send({ status: 'unavailable' })));
  app.options('/user', async (_req, reply) => reply.code(204).send());

  await app.register(async (api) => {
    await api.register(gatehouseFastify, { issuer: gh.oauth.issuer, audience: gh.oauth.audience, realm: REALM, verifier: verifier ?? lazyVerifier(() => apiVerifier(gh)),
      clientCertificate: clientCertificateReader(gh.config) });
    const profile = { config: { auth: { scope: { any: PROFILE_SCOPES } } } };
    const user = async (req: import('fastify').FastifyRequest) => {
      const token = req.auth!;
      // A client acting for itself, or a deleted user: this token stands for no one signed in.
      const found = token.userId ? await gh.storage.users.get(token.userId) : undefined;
      if (!found) throw invalidToken('the access token does not belong to a user');
      return userProfile(found, token.scope);
    };
    api.get('/user', profile, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return user(req);
    });
    api.post('/user', profile, async (req, reply) => {
      reply.header('cache-control', 'no-store');
      return user(req);
    });
  });
  return app;
}
