import type { FastifyBaseLogger, FastifyInstance, FastifyServerFactory } from 'fastify';
import { baseApp } from '../base-app.js';
import cookie from '@fastify/cookie';
import type { Gatehouse } from '../../gatehouse.js';
import { handleError, readiness, rejectNulCharacters, sendOAuthError, sendPage } from '../common.js';
import { notFoundPage } from '../pages/home.js';
import { invalidRequest } from '../../core/errors.js';
import { adminRoutes } from './admin-routes.js';
import { authorizeRoutes } from './authorize-routes.js';
import { loginRoutes } from './login-routes.js';
import { signupRoutes } from './signup-routes.js';
import { notifyLinkRoutes } from './notify-link-routes.js';
import { chatLinkRoutes } from './chat-link-routes.js';
import { oidcRoutes } from './oidc-routes.js';
import { accountRoutes } from './account-routes.js';
import { verifyEmailRoutes } from './verify-email-routes.js';
import { accessRoutes } from './access-routes.js';
import { securityRoutes } from './security-routes.js';
import { secondStepRoutes } from './second-step-routes.js';
import { forgotRoutes } from './forgot-routes.js';
import { passkeyRoutes } from './passkey-routes.js';
import { federationRoutes } from './federation-routes.js';
import { oauthRoutes } from './oauth-routes.js';
import { registrationRoutes } from './registration-routes.js';
import { deviceAuthorizationRoute, devicePages } from './device-routes.js';
import { cibaRoutes } from './ciba-routes.js';
import { consolePages } from '../console/index.js';
import { validateWithZod } from '../input.js';

/** Builds the authorization server ({auth_url}); never listens (tests call inject or listen themselves). */
export async function buildAuthServer(gh: Gatehouse, logger?: FastifyBaseLogger, serverFactory?: FastifyServerFactory): Promise<FastifyInstance> {
  const app = await baseApp(gh, 'auth', {
    logger, serverFactory, https: true,
    bodyLimit: 64 * 1024,
    // A path the router cannot decode (`/%ZZ`) or an over-long path parameter: an RFC-shaped 400, not fastify's own body.
    frameworkErrors: (_err, _req, reply) => {
      sendOAuthError(reply, invalidRequest('malformed request path'));
    },
  });
  validateWithZod(app);
  app.setErrorHandler(handleError);
  app.addHook('preHandler', rejectNulCharacters);
  app.setNotFoundHandler((req, reply) => {
    if (req.headers.accept?.includes('text/html')) return sendPage(reply, 404, notFoundPage());
    return sendOAuthError(reply, invalidRequest('not found', { status: 404 }));
  });

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', (_req, reply) => readiness(gh, reply));

  await oauthRoutes(app, gh);
  // Dynamic client registration (RFC 7591, RFC 7592) in a context of its own: its CORS and no-store hook stay there.
  await app.register(async (registration) => registrationRoutes(registration, gh));
  await deviceAuthorizationRoute(app, gh);
  await cibaRoutes(app, gh);
  // Only the pages (and the OpenID Connect routes beside them) use cookies: @fastify/cookie's
  // hooks run on every request of the context that registers it, so the token, introspection
  // and revocation endpoints live outside this one and do not pay for them.
  await app.register(async (pages) => {
    await pages.register(cookie);
    await authorizeRoutes(pages, gh);
    await loginRoutes(pages, gh);
    await signupRoutes(pages, gh);
    await notifyLinkRoutes(pages, gh);
    await chatLinkRoutes(pages, gh);
    await oidcRoutes(pages, gh);
    await accountRoutes(pages, gh);
    await verifyEmailRoutes(pages, gh);
    await accessRoutes(pages, gh);
    await securityRoutes(pages, gh);
    await secondStepRoutes(pages, gh);
    await forgotRoutes(pages, gh);
    await passkeyRoutes(pages, gh);
    await devicePages(pages, gh);
    await federationRoutes(pages, gh);
  });
  // The admin console shares /admin/… with the JSON API: a request with a bearer token gets the API.
  await consolePages(app, gh);
  await app.register(async (admin) => adminRoutes(admin, gh), { prefix: '/admin' });
  return app;
}
