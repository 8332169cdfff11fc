import type { Logger } from 'pino';
import { ChatLinker } from '../core/notify/link.js';
import { DeliveryWorker, type WorkerOptions } from '../core/notify/worker.js';
import type { Gatehouse } from '../gatehouse.js';
import { httpTransport } from './notify-http.js';

/** Delivered and dead-lettered messages, their attempts and events are kept this long. */
const RETENTION_MS = 30 * 24 * 3600_000;

export interface RunningNotifyWorker {
  worker: DeliveryWorker;
  linker: ChatLinker | undefined;
  stop(): Promise<void>;
}

/**
 * The `worker` role: the outbox worker with the real transports. Webhooks go
 * through the SSRF guard; chat messages go to the Bot API the operator
 * configured (Gatehouse's own {bot_api_url} by default).
 */
export function startNotifyWorker(gh: Gatehouse, logger: Logger, opts: Partial<WorkerOptions> = {}): RunningNotifyWorker {
  const { config } = gh;
  const token = config.notifyBotToken;
  const chat = token ? { apiUrl: config.notifyBotApiUrl ?? config.botApiUrl, token } : undefined;
  const chats = httpTransport({ allowPrivate: true, maxSockets: 16 });
  const worker = new DeliveryWorker({
    events: gh.storage.events,
    clock: gh.clock,
    webhooks: httpTransport({ allowPrivate: config.allowPrivateWebhooks }),
    chats,
    chat,
    log: logger,
  }, { timeoutMs: config.webhookTimeout * 1000, ...opts });
  worker.start();
  // The notification bot answers /start (a link to open while signed in) and /stop.
  const linker = chat && new ChatLinker({ transport: chats, chat, events: gh.storage.events, keys: gh.keys, clock: gh.clock, authUrl: () => gh.oauth.issuer, log: logger });
  linker?.start();
  const purge = setInterval(() => {
    gh.storage.events.purge(gh.clock.now() - RETENTION_MS)
      .then((n) => n && logger.debug({ deleted: n }, 'purged old notification rows'))
      .catch((err) => logger.warn({ err }, 'notification purge failed'));
  }, 3600_000);
  purge.unref();
  return {
    worker,
    linker,
    async stop() {
      clearInterval(purge);
      await linker?.stop();
      await worker.stop();
    },
  };
}
