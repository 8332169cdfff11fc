import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory, type FastifyServerOptions } from 'fastify';
import formbody from '@fastify/formbody';
import type { Gatehouse } from '../gatehouse.js';
import { limitJsonDepth, zodSchemaController } from './input.js';
import { instrumentHttp, type ListenerName } from './metrics.js';
import { httpsOptions } from './tls.js';

export interface BaseAppOptions {
  logger?: FastifyBaseLogger;
  /** The listener bound before the services were built (src/http/listener.ts). */
  serverFactory?: FastifyServerFactory;
  /** Whether this listener serves TLS itself (GATEHOUSE_TLS_CERT/KEY) on its own port. */
  https: boolean;
  bodyLimit: number;
  /** A path the router cannot decode (`/%ZZ`): each listener answers in its own error shape, never Fastify's. */
  frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']>;
  /** Options only one listener needs (router limits, a client-error handler). */
  extra?: Partial<FastifyServerOptions>;
}

/**
 * The Fastify instance every listener starts from, so the settings that keep
 * secrets out of logs and 5xx out of bad input are written once: no
 * per-request log lines (URLs carry codes, states, tokens; RFC 6750 §2.3),
 * routes checked with zod (validateWithZod, where each listener registers it)
 * so Fastify's JSON-schema compilers load only if ever needed, form bodies,
 * metrics and tracing, a JSON depth limit.
 */
export async function baseApp(gh: Gatehouse, listener: ListenerName, o: BaseAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: o.logger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: gh.config.trustProxy,
    ...(o.https ? httpsOptions(gh.config) : {}),
    ...(o.serverFactory ? { serverFactory: o.serverFactory } : {}),
    schemaController: zodSchemaController,
    bodyLimit: o.bodyLimit,
    frameworkErrors: o.frameworkErrors,
    ...o.extra,
  });
  await app.register(formbody);
  instrumentHttp(app, listener);
  limitJsonDepth(app);
  return app;
}
