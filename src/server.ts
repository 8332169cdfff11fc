import type { FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from './config.js';
import { createGatehouse, type Gatehouse, type GatehouseOptions } from './gatehouse.js';
import { buildAuthServer } from './http/auth/app.js';
import { buildApiServer } from './http/api/app.js';
import { startBotInterface, type RunningBotInterface } from './http/bot/start.js';
import { startNotifyWorker, type RunningNotifyWorker } from './infra/notify-worker.js';

export interface RunningGatehouse {
  gh: Gatehouse;
  authUrl: string;
  /** The resource server's base URL ({api_url}), also the `aud` of access tokens. */
  apiUrl: string;
  /** Where the authorization server listens (differs from authUrl behind a proxy or a shared issuer). */
  listening: string;
  /** The chat-bot interface ({bot_api_url}) when the `bot` role runs. */
  bot: RunningBotInterface | undefined;
  /** The outbox worker (webhooks, chat notifications) when the `worker` role runs. */
  notify: RunningNotifyWorker | undefined;
  logger: Logger;
  /** Stops accepting, finishes in-flight requests, closes storage. */
  close(): Promise<void>;
}

/** With port 0 the URL is only known after listening; an explicit URL setting always wins. */
function actualUrl(configured: string, address: string): string {
  const u = new URL(configured);
  if (u.port !== '0') return configured;
  u.port = new URL(address).port;
  return u.toString().replace(/\/+$/, '');
}

const PURGE_EVERY_MS = 10 * 60_000;

export async function startGatehouse(config: Config, opts: GatehouseOptions & { logger?: Logger } = {}): Promise<RunningGatehouse> {
  const logger = opts.logger ?? pino({ level: config.logLevel, base: undefined });
  const gh = await createGatehouse(config, opts);
  const servers: FastifyInstance[] = [];
  let authUrl = config.authUrl;
  let apiUrl = config.apiUrl;
  let listening = '';
  let bot: RunningBotInterface | undefined;
  try {
    if (config.roles.has('auth')) {
      const app = await buildAuthServer(gh, logger);
      const address = await app.listen({ host: config.host, port: config.authPort });
      listening = address;
      authUrl = actualUrl(config.authUrl, address);
      config.authUrl = authUrl;
      gh.oauth.issuer = authUrl;
      servers.push(app);
    }
    // The resource server ({api_url}); its URL is the `aud` of access tokens, so it is fixed once known.
    if (config.roles.has('api')) {
      const api = await buildApiServer(gh, logger);
      apiUrl = actualUrl(config.apiUrl, await api.listen({ host: config.host, port: config.apiPort }));
      config.apiUrl = apiUrl;
      gh.oauth.audience = apiUrl;
      servers.push(api);
    }
    // The chat-bot interface ({bot_api_url}): Bot API, chat client API, chat page and BotFather.
    if (config.roles.has('bot')) bot = await startBotInterface(gh, logger, { port: config.botPort });
  } catch (e) {
    await bot?.close();
    await Promise.all(servers.map((s) => s.close()));
    await gh.close();
    throw e;
  }

  // Expired tokens, codes and keys are deleted in the background, in small statements.
  const purge = setInterval(() => {
    const now = gh.clock.now();
    // Single sign-on records outlive their session only as long as a refresh token could need them.
    Promise.all([gh.storage.tokens.purgeExpired(now), gh.storage.keys.deleteExpired(now), gh.storage.signIns.purge(now - gh.oauth.refreshTokenTtl * 1000)])
      .then(([n]) => n && logger.debug({ deleted: n }, 'purged expired rows'))
      .catch((err) => logger.warn({ err }, 'purge failed'));
  }, PURGE_EVERY_MS);
  purge.unref();

  logger.info({ auth_url: authUrl, api_url: config.roles.has('api') ? apiUrl : undefined, database: config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl : 'postgres' },
    `Gatehouse ready: authorization server ${authUrl} (metadata ${authUrl}/.well-known/oauth-authorization-server)` +
    (config.roles.has('api') ? `, resource server ${apiUrl} (${apiUrl}/user)` : '') +
    (bot ? `, chat-bot interface ${bot.url} (Bot API ${bot.url}/bot<token>/<method>, chat page ${bot.url}/)` : ''));
  if (!config.adminToken) logger.info('admin HTTP API disabled: set GATEHOUSE_ADMIN_TOKEN to enable it');

  // Notifications (role `worker`): started after the listeners, so {bot_api_url} is known.
  const notify = config.roles.has('worker') ? startNotifyWorker(gh, logger) : undefined;

  return {
    gh,
    authUrl,
    apiUrl,
    listening,
    bot,
    notify,
    logger,
    async close() {
      clearInterval(purge);
      await bot?.close();
      await Promise.all(servers.map((s) => s.close()));
      // After the listeners: requests finishing now may still commit events; attempts in flight complete.
      await notify?.stop();
      await gh.close();
    },
  };
}
