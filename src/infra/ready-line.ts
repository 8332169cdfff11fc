import type { Logger } from 'pino';
import type { Config } from '../config.js';

export interface ServedUrls {
  authUrl: string;
  apiUrl: string | undefined;
  botUrl: string | undefined;
}

/**
 * The line a process manager (and the tests' serveProcess) waits for: logged
 * once per `serve`, by the process itself or, with GATEHOUSE_WORKERS above 1,
 * by the primary once every worker serves. `heading` replaces "Gatehouse
 * ready" on a worker's own line.
 */
export function logReady(logger: Logger, config: Config, urls: ServedUrls, extra: object = {}, heading = 'Gatehouse ready'): void {
  const { authUrl, apiUrl, botUrl } = urls;
  logger.info({ auth_url: authUrl, api_url: apiUrl, bot_api_url: botUrl, database: config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl : 'postgres', ...extra },
    `${heading}: authorization server ${authUrl} (metadata ${authUrl}/.well-known/oauth-authorization-server)` +
    (apiUrl ? `, resource server ${apiUrl} (${apiUrl}/user)` : '') +
    (botUrl ? `, chat-bot interface ${botUrl} (Bot API ${botUrl}/bot<token>/<method>, chat page ${botUrl}/)` : ''));
}
