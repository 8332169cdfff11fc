import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import formbody from '@fastify/formbody';
import type { BotApi } from '../../core/bot/api.js';
import { badRequest, botError } from '../../core/bot/errors.js';
import type { BotFiles } from '../../core/bot/files.js';
import type { ChatClient } from '../../core/bot/people.js';
import type { Gatehouse } from '../../gatehouse.js';
import { botApiRoutes } from './api-routes.js';
import { clientRoutes } from './client-routes.js';
import { sendBotError } from './envelope.js';
import { readiness } from '../common.js';
import { botAnswer, botDescription, botFrameworkRefusal, handlerFor } from '../errors.js';
import { multipartFields } from './multipart.js';
import { limitJsonDepth, zodSchemaController } from '../input.js';
import { pageRoutes } from './page-routes.js';
import { browserNotFound, wantsPage } from './browser-not-found.js';
import { instrumentHttp } from '../metrics.js';

export interface BotApp {
  api: BotApi;
  client: ChatClient;
  files: BotFiles;
}

/**
 * Requests Node's parser refuses before Fastify sees them (headers or URL
 * over 16 KiB, malformed request lines) get the Bot API envelope too.
 */
function clientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const text = botDescription(botError(status));
  const body = JSON.stringify(botAnswer(botError(status)).body);
  if (socket.writable) socket.write(`HTTP/1.1 ${status} ${text}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(err);
}

/** Builds the chat-bot interface ({bot_api_url}); never listens. */
export async function buildBotServer(gh: Gatehouse, bots: BotApp, logger?: FastifyBaseLogger, serverFactory?: FastifyServerFactory): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: logger,
    // Bot API URLs carry bot tokens: no per-request log lines.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: gh.config.trustProxy,
    // The listener bound before the services were built (src/http/listener.ts).
    ...(serverFactory ? { serverFactory } : {}),
    bodyLimit: 1024 * 1024,
    // Long tokens and method names reach the route (401, 404); longer path segments are 414 below.
    routerOptions: { maxParamLength: 1024 },
    // Paths the router cannot take (bad percent-encoding, an oversized segment) answer in the envelope.
    frameworkErrors: (error, _req, reply) => {
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendBotError(reply, botError(414));
      return sendBotError(reply, badRequest('malformed URL'));
    },
    clientErrorHandler: clientError,
    // The chat client's routes are checked with zod (client-routes.ts): Fastify's JSON-schema compilers load only if ever needed.
    schemaController: zodSchemaController,
  });
  await app.register(formbody);
  instrumentHttp(app, 'bot');
  limitJsonDepth(app);
  multipartFields(app, bots.files.blobs, bots.api);
  // Other media types: the body is ignored, as the parameters may all be in the query string.
  app.addContentTypeParser('*', (_req, payload, done) => {
    payload.resume();
    payload.on('end', () => done(null, undefined));
    payload.on('error', (err) => done(err, undefined));
  });
  // The Bot API envelope for everything here (the pages are static; the chat client API has its own
  // shape in its own context). A store outage is 503 with `retry_after`, which clients that honour it
  // for 429 wait on the same way.
  app.setErrorHandler(handlerFor(botAnswer, botFrameworkRefusal));
  // A browser's wrong address gets a page leading to the chat page (src/http/bot/browser-not-found.ts).
  const notFoundPage = browserNotFound(app, gh);
  app.setNotFoundHandler((req, reply) => (wantsPage(req) ? notFoundPage(reply) : sendBotError(reply, botError(404))));

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', (_req, reply) => readiness(gh, reply));
  await pageRoutes(app, gh);
  await clientRoutes(app, gh, bots.client, bots.files);
  await botApiRoutes(app, bots.api, bots.files);
  return app;
}
