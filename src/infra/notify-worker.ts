import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { ChatLinker } from '../core/notify/link.js';
import { notifyTransport, type Transport } from '../core/notify/transport.js';
import { DeliveryWorker, type WorkerOptions } from '../core/notify/worker.js';
import type { Gatehouse } from '../gatehouse.js';
import { webhookDeliverySeconds } from './metrics.js';
import { inClientSpan } from './tracing.js';
import { mailChannel } from '../core/mail/delivery.js';
import { mailSender } from './mail-transport.js';

/** Each attempt's duration and outcome, for the metrics (docs/operations.md, Metrics). */
function timed(kind: 'webhook' | 'chat', transport: Transport): Transport {
  return {
    async post(req) {
      const end = webhookDeliverySeconds.startTimer({ transport: kind });
      // The host only: a chat delivery's URL carries the bot token.
      const answer = await inClientSpan(`POST ${kind}`, { 'http.request.method': 'POST', 'server.address': new URL(req.url).hostname, 'gatehouse.transport': kind },
        () => transport.post(req), (a) => a.status);
      end({ outcome: answer.status !== null && answer.status >= 200 && answer.status < 300 ? 'ok' : 'failed' });
      return answer;
    },
  };
}

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
/** Expired sign-in approvals are edited to say so within this long of their 2 minutes, pressed or not. */
const APPROVAL_SWEEP_MS = 5000;

export function startNotifyWorker(gh: Gatehouse, logger: Logger, options: Partial<WorkerOptions> & { approvalSweepMs?: number } = {}): RunningNotifyWorker {
  const { approvalSweepMs = APPROVAL_SWEEP_MS, ...opts } = options;
  const { config } = gh;
  const token = config.notifyBotToken;
  const chat = token ? { apiUrl: config.notifyBotApiUrl ?? config.botApiUrl, token } : undefined;
  // The Bot API is the operator's; webhook URLs are registered ones (GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS).
  const chats = timed('chat', notifyTransport(gh.outbound.configured.request));
  // E-mail (GATEHOUSE_SMTP_URL) rides the same deliveries; unset, its messages wait (none are queued then).
  const sender = config.smtp && mailSender(config.smtp, config.webhookTimeout * 1000, logger);
  const worker = new DeliveryWorker({
    events: gh.storage.events,
    clock: gh.clock,
    webhooks: timed('webhook', notifyTransport(gh.outbound.registered.request)),
    chats,
    chat,
    mail: sender && mailChannel({ outbox: gh.storage.mail, sender, from: config.mailFrom, site: gh.mailer.site }),
    clientName: async (id) => (await gh.storage.clients.get(id))?.name,
    log: logger,
    // Which process holds a lease, for an operator reading webhook_deliveries.
    owner: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
  }, { timeoutMs: config.webhookTimeout * 1000, ...opts });
  worker.start();
  // The notification bot answers /start (a link to open while signed in) and /stop.
  const linker = chat && new ChatLinker({ transport: chats, chat, events: gh.storage.events, keys: gh.keys, clock: gh.clock, authUrl: () => gh.oauth.issuer, log: logger, actions: gh.chatActions, codes: gh.chatLinkCodes });
  linker?.start();
  const purge = setInterval(() => {
    gh.storage.events.purge(gh.clock.now() - RETENTION_MS)
      .then((n) => n && logger.debug({ deleted: n }, 'purged old notification rows'))
      .catch((err) => logger.warn({ err }, 'notification purge failed'));
    // What a delivered e-mail said (its links) is not kept.
    gh.storage.mail.purge().catch((err) => logger.warn({ err }, 'e-mail purge failed'));
    // Finished and expired second steps (kept a day so a late press is told it expired) and WebAuthn challenges.
    gh.mfa.store.purge(gh.clock.now()).catch((err) => logger.warn({ err }, 'second-step purge failed'));
  }, 3600_000);
  // Every worker sweeps: the conditional UPDATE lets one record each expiry, the edit is idempotent (src/core/mfa/approval.ts).
  let sweeping: Promise<unknown> | undefined;
  const sweep = setInterval(() => {
    // Role requests nobody decided and elevations past their end too (src/core/access/elevation.ts).
    sweeping ??= Promise.all([gh.mfa.approval.sweepExpired(gh.clock.now()), gh.access.elevations.sweep(gh.clock.now())])
      .catch((err) => logger.warn({ err }, 'sweeping expired sign-in approvals failed'))
      .finally(() => (sweeping = undefined));
  }, approvalSweepMs);
  sweep.unref();
  // Not unref'd: this timer keeps a process running the worker role alone alive until stop(). Every
  // other timer of the worker is unref'd, and on SQLite no socket holds the event loop either, so
  // `serve --roles worker` exited (status 0) right after starting.
  return {
    worker,
    linker,
    async stop() {
      clearInterval(purge);
      clearInterval(sweep);
      await sweeping;
      await linker?.stop();
      await worker.stop();
      sender?.close();
    },
  };
}
