import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { BotFather } from '../../core/bot/botfather.js';
import { defaultFloodPolicy, type FloodPolicy } from '../../core/bot/flood.js';
import { ChatClient } from '../../core/bot/people.js';
import { BotService } from '../../core/bot/service.js';
import { LocalWakeups, type Wakeups } from '../../core/bot/wakeups.js';
import type { Gatehouse } from '../../gatehouse.js';
import { botStorage } from '../../store/bot/index.js';
import { RedisWakeups, redisDeliveryLease } from '../../store/bot/redis-wakeups.js';
import { connectRedis } from '../../store/redis/index.js';
import { buildBotServer } from './app.js';
import { ensureChatClient } from './chat-client.js';
import { webhookPoster, webhookUrlChecker } from './webhook-client.js';
import { WebhookDeliverer } from '../../core/bot/webhook-delivery.js';

export interface RunningBotInterface {
  app: FastifyInstance;
  service: BotService;
  url: string;
  close(): Promise<void>;
}

const HOUR = 3600_000;

/**
 * Starts the chat-bot interface ({bot_api_url}) on its own listener: Bot API,
 * chat client API and chat page, BotFather, and the background work
 * (webhook delivery, updates kept 24 hours).
 */
export async function startBotInterface(gh: Gatehouse, logger: Logger, opts: { port: number; flood?: FloodPolicy; wakeups?: Wakeups }): Promise<RunningBotInterface> {
  // With Redis, wake-ups reach the other processes too (INTERFACE.md, GATEHOUSE_REDIS_URL),
  // and a lease per bot keeps webhook delivery to one process at a time.
  const redisUrl = gh.config.redisUrl;
  const leaseRedis = redisUrl ? connectRedis(redisUrl) : undefined;
  const wakeups = opts.wakeups ?? (leaseRedis ? new RedisWakeups(leaseRedis, connectRedis(redisUrl!), `${gh.config.redisPrefix}bot:`) : new LocalWakeups());
  const lease = leaseRedis ? redisDeliveryLease(leaseRedis, `${gh.config.redisPrefix}bot:`, randomUUID()) : undefined;
  const service = new BotService({
    storage: botStorage(gh.storage),
    users: gh.storage.users,
    wakeups,
    clock: gh.clock,
    config: { allowPrivateWebhooks: gh.config.allowPrivateWebhooks, flood: opts.flood ?? gh.config.botFlood ?? defaultFloodPolicy, updateTtlMs: 24 * HOUR },
    checkWebhookUrl: webhookUrlChecker(gh.config.allowPrivateWebhooks),
  });
  await service.init();
  new BotFather(service);
  const client = new ChatClient(service);
  const deliverer = new WebhookDeliverer(service, webhookPoster(gh.config.allowPrivateWebhooks), undefined,
    (err) => logger.warn({ err }, 'webhook delivery failed'), lease);
  await deliverer.start();
  const app = await buildBotServer(gh, { service, client }, logger);
  const address = await app.listen({ host: gh.config.host, port: opts.port });
  const configured = new URL(gh.config.botApiUrl);
  if (configured.port === '0') configured.port = new URL(address).port;
  const url = configured.toString().replace(/\/+$/, '');
  gh.config.botApiUrl = url;
  await ensureChatClient(gh, url);

  const purge = setInterval(() => {
    service.deps.storage.updates.purgeOlderThan(gh.clock.now() - service.deps.config.updateTtlMs)
      .catch((err) => logger.warn({ err }, 'purging old bot updates failed'));
  }, 10 * 60_000);
  purge.unref();

  return {
    app,
    service,
    url,
    async close() {
      clearInterval(purge);
      // Pending long polls answer at once, so closing does not wait up to 50 s for them.
      service.close();
      deliverer.stop();
      await app.close();
      await wakeups.close();
      if (!opts.wakeups) leaseRedis?.disconnect();
    },
  };
}
