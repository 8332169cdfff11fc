import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
import { BotApiError } from '../../core/bot/errors.js';
import type { ChatClient } from '../../core/bot/people.js';
import type { BotService } from '../../core/bot/service.js';
import type { Gatehouse } from '../../gatehouse.js';
import { botApiRoutes } from './api-routes.js';
import { clientRoutes } from './client-routes.js';
import { frameworkError, sendBotError } from './envelope.js';
import { multipartFields } from './multipart.js';
import { pageRoutes } from './page-routes.js';

export interface BotApp {
  service: BotService;
  client: ChatClient;
}

/** Builds the chat-bot interface ({bot_api_url}); never listens. */
export async function buildBotServer(gh: Gatehouse, bots: BotApp, logger?: FastifyBaseLogger): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    // Bot API URLs carry bot tokens: no per-request log lines.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: gh.config.trustProxy,
    bodyLimit: 1024 * 1024,
  });
  await app.register(formbody);
  multipartFields(app);
  // Other media types: the body is ignored, as the parameters may all be in the query string.
  app.addContentTypeParser('*', (_req, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });
  app.setErrorHandler((error, req, reply) => {
    const known = error instanceof BotApiError ? error : frameworkError(error);
    if (known) return sendBotError(reply, known);
    req.log.error({ err: error }, 'request failed');
    return sendBotError(reply, new BotApiError(500, 'Internal Server Error'));
  });
  app.setNotFoundHandler((_req, reply) => sendBotError(reply, new BotApiError(404, 'Not Found')));

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => ((await gh.storage.ready()) ? { status: 'ready' } : reply.code(503).send({ status: 'unavailable' })));
  await pageRoutes(app, gh);
  await clientRoutes(app, gh, bots.client);
  await botApiRoutes(app, bots.service);
  return app;
}
