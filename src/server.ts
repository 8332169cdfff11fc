import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { ServerOptions } from 'node:https';
import { withListeners, type Config } from './config.js';
import { createBotInterface, createGatehouse, createResourceVerifier, type BotInterface, type Gatehouse, type GatehouseOptions, type ProcessLinks } from './gatehouse.js';
import { buildAuthServer } from './http/auth/app.js';
import { buildApiServer } from './http/api/app.js';
import { ensureChatPageClient } from './core/bot/chat-page-client.js';
import type { RunningNotifyWorker } from './infra/notify-worker.js';
import { bindListener, type Listener } from './http/listener.js';
import { httpsOptions } from './http/tls.js';
import type { MetricsListener } from './infra/metrics.js';
import { enableHttpMetrics } from './http/metrics.js';
import type { ClusterLinks } from './infra/cluster-child.js';
import { logReady, type ServedUrls } from './infra/ready-line.js';
import { flushTraces, startTracing } from './infra/tracing.js';

/** The chat-bot interface ({bot_api_url}) as it runs: its listener and its core. */
export interface RunningBotInterface {
  app: FastifyInstance;
  core: BotInterface;
  url: string;
  close(): Promise<void>;
}

/** Bot API, chat client API, chat page and BotFather on their own listener. */
async function startBotInterface(gh: Gatehouse, logger: Logger, listener: Listener, links?: ProcessLinks): Promise<RunningBotInterface> {
  const core = await createBotInterface(gh, logger, links);
  await core.start();
  try {
    const url = gh.config.botApiUrl;
    await ensureChatPageClient({ clients: gh.storage.clients, clock: gh.clock }, url);
    // Loaded only when the bot role runs: the chat page, its assets and the Bot API routes are most of the HTTP code.
    const { buildBotServer } = await import('./http/bot/app.js');
    const app = await buildBotServer(gh, core, logger, listener.serverFactory);
    await app.ready();
    listener.announce(logger);
    return {
      app,
      core,
      url,
      async close() {
        core.stop();
        await app.close();
        await listener.close();
        await core.close();
      },
    };
  } catch (e) {
    core.stop();
    await core.close();
    throw e;
  }
}

export interface RunningGatehouse {
  gh: Gatehouse;
  authUrl: string;
  /** The resource server's base URL ({api_url}), also the `aud` of access tokens. */
  apiUrl: string;
  /** Where the authorization server listens (differs from authUrl behind a proxy or a shared issuer). */
  listening: string;
  /** The chat-bot interface ({bot_api_url}) when the `bot` role runs. */
  bot: RunningBotInterface | undefined;
  /** Where `/metrics` is served (GATEHOUSE_METRICS_PORT), when it is. */
  metricsUrl: string | undefined;
  /** The outbox worker (webhooks, chat notifications) when the `worker` role runs. */
  notify: RunningNotifyWorker | undefined;
  logger: Logger;
  /** Stops accepting, finishes in-flight requests, closes storage. */
  close(): Promise<void>;
}

/** The listeners of the roles this process runs, bound before anything else so port 0 is a known port. */
async function bindListeners(config: Config): Promise<{ auth?: Listener; api?: Listener; bot?: Listener }> {
  const bound: { auth?: Listener; api?: Listener; bot?: Listener } = {};
  try {
    // The authorization and resource servers speak HTTPS when a certificate is set; the chat-bot interface plain HTTP.
    const tls = (httpsOptions(config) as { https?: ServerOptions }).https;
    if (config.roles.has('auth')) bound.auth = await bindListener(config.host, config.authPort, tls);
    if (config.roles.has('api')) bound.api = await bindListener(config.host, config.apiPort, tls);
    if (config.roles.has('bot')) bound.bot = await bindListener(config.host, config.botPort);
  } catch (e) {
    await Promise.all(Object.values(bound).map((l) => l.close()));
    throw e;
  }
  return bound;
}

const PURGE_EVERY_MS = 10 * 60_000;

/** One of the processes of a `serve` with GATEHOUSE_WORKERS above 1 (src/infra/cluster-primary.ts). */
export interface WorkerProcess {
  /** 1…N; its log lines carry it (`worker`), and slot 1 runs the notification worker role. */
  slot: number;
  links: ClusterLinks;
  /** Told once this worker serves, with the URLs its listeners got. */
  ready(urls: ServedUrls): void;
}

/** The notification worker sees events other workers commit at once (through the primary), not at its next sweep. */
function woken(gh: Gatehouse, links: ClusterLinks): Gatehouse {
  const storage = Object.create(gh.storage, { events: { value: links.withOutboxWakes(gh.storage.events) } }) as Gatehouse['storage'];
  return { ...gh, storage };
}

export async function startGatehouse(configured: Config, opts: GatehouseOptions & { logger?: Logger; worker?: WorkerProcess } = {}): Promise<RunningGatehouse> {
  const { worker } = opts;
  const logger = opts.logger ?? pino({ level: configured.logLevel, base: undefined });
  // OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/operations.md, Traces); before the apps, so their hooks see it.
  await startTracing(process.env);
  // Prometheus counters only when something serves them (GATEHOUSE_METRICS_PORT): prom-client is loaded, and each request counted, only then.
  if (configured.metricsPort !== undefined) await enableHttpMetrics();
  const listeners = await bindListeners(configured);
  // The public URLs with the ports the listeners got: final before any service reads them.
  const config = withListeners(configured, { auth: listeners.auth?.port, api: listeners.api?.port, bot: listeners.bot?.port });
  const { authUrl, apiUrl } = config;
  const servers: FastifyInstance[] = [];
  let bot: RunningBotInterface | undefined;
  let gh: Gatehouse | undefined;
  try {
    gh = await createGatehouse(config, { ...opts, logger });
    if (listeners.auth) {
      const app = await buildAuthServer(gh, logger, listeners.auth.serverFactory);
      servers.push(app);
      await app.ready();
      listeners.auth.announce(logger);
    }
    // The resource server ({api_url}); its URL is the `aud` of access tokens.
    if (listeners.api) {
      const api = await buildApiServer(gh, createResourceVerifier(gh), logger, listeners.api.serverFactory);
      servers.push(api);
      await api.ready();
      listeners.api.announce(logger);
    }
    // The chat-bot interface ({bot_api_url}): Bot API, chat client API, chat page and BotFather.
    if (listeners.bot) bot = await startBotInterface(gh, logger, listeners.bot, worker?.links.forBots());
  } catch (e) {
    await bot?.close();
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all([listeners.auth, listeners.api, listeners.bot].map((l) => l?.close()));
    await gh?.close();
    throw e;
  }
  const listening = listeners.auth?.address ?? '';
  const closeListeners = () => Promise.all([listeners.auth, listeners.api].map((l) => l?.close()));

  // Expired tokens, codes and keys are deleted in the background, in small statements.
  const purge = setInterval(() => {
    const now = gh.clock.now();
    // Single sign-on records outlive their session only as long as a refresh token could need them.
    Promise.all([gh.storage.tokens.purgeExpired(now), gh.storage.codes.purgeExpired(now), gh.storage.keys.deleteExpired(now), gh.storage.signIns.purge(now - gh.oauth.refreshTokenTtl * 1000),
      // E-mail verification links past their 24 hours, used or not (their addresses go with them).
      gh.storage.emailVerifications.deleteExpired(now)])
      .then(([n]) => n && logger.debug({ deleted: n }, 'purged expired rows'))
      .catch((err) => logger.warn({ err }, 'purge failed'));
  }, PURGE_EVERY_MS);
  purge.unref();

  if (worker) {
    // Which worker took a connection (GATEHOUSE_LOG_LEVEL=trace): how an operator sees the load spread.
    for (const app of [...servers, ...(bot ? [bot.app] : [])]) {
      app.server.on('connection', (socket: { localPort?: number; remotePort?: number }) => logger.trace({ port: socket.localPort, remote_port: socket.remotePort }, 'connection accepted'));
    }
  }
  // A worker's line is not the one a process manager waits for: the primary logs that once all serve.
  const served = { authUrl, apiUrl: config.roles.has('api') ? apiUrl : undefined, botUrl: bot?.url };

  // Notifications (role `worker`): started after the listeners, so {bot_api_url} is known.
  // Loaded with the role only (it brings the delivery code and its metrics).
  const notify = config.roles.has('worker') ? (await import('./infra/notify-worker.js')).startNotifyWorker(worker ? woken(gh, worker.links) : gh, logger) : undefined;
  const unreport = worker && !notify ? worker.links.reportOutbox(gh.storage.events) : undefined;
  let metrics: MetricsListener | undefined;
  const { countWebhookBacklogWith, joinClusterMetrics, startMetricsListener } = config.metricsPort === undefined ? {} : await import('./infra/metrics.js');
  // A worker's metrics are served by its primary, summed over the workers (prom-client's AggregatorRegistry).
  if (worker && joinClusterMetrics) joinClusterMetrics();
  if (countWebhookBacklogWith && startMetricsListener && config.metricsPort !== undefined && (!worker || notify)) {
    // Through the outbox port (endpoints are few); each endpoint's count is capped at the port's page of 1000.
    const { events } = gh.storage;
    countWebhookBacklogWith(async () => {
      const endpoints = await events.endpoints.list();
      const pending = await Promise.all(endpoints.map((e) => events.deliveries.list(e.id, { status: 'pending', limit: 1000 })));
      return pending.reduce((n, l) => n + l.length, 0);
    });
    try {
      if (!worker) metrics = await startMetricsListener(config.host, config.metricsPort);
    } catch (e) {
      clearInterval(purge);
      await bot?.close();
      await Promise.all(servers.map((s) => s.close()));
      await closeListeners();
      await notify?.stop();
      await gh.close();
      throw e;
    }
    if (metrics) logger.info({ metrics_url: `${metrics.url}/metrics` }, `Prometheus metrics at ${metrics.url}/metrics`);
  }
  // The line a process manager (and a test) waits for comes last: once it is printed, everything has
  // started, and `serve` installs its SIGTERM handler in the same turn (src/cli/serve.ts).
  logReady(logger, config, served, {}, worker ? `worker ${worker.slot} serving` : undefined);
  if (!config.adminToken) logger.info('admin HTTP API disabled: set GATEHOUSE_ADMIN_TOKEN to enable it');
  worker?.ready(served);

  return {
    gh,
    authUrl,
    apiUrl,
    listening,
    bot,
    metricsUrl: metrics?.url,
    notify,
    logger,
    async close() {
      clearInterval(purge);
      unreport?.();
      await metrics?.close();
      await bot?.close();
      await Promise.all(servers.map((s) => s.close()));
      await closeListeners();
      // After the listeners: requests finishing now may still commit events; attempts in flight complete.
      await notify?.stop();
      await gh.close();
      await flushTraces();
    },
  };
}
