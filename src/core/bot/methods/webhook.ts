import type { WebhookInfo } from '@grammyjs/types';
import { z } from 'zod';
import type { Clock } from '../../ports.js';
import { secs } from '../conversations.js';
import { badRequest, tooManyRequests } from '../errors.js';
import { Described, method } from '../method.js';
import { bool, int, str, updateTypes } from '../params.js';
import type { BotRecord, BotStore, UpdateStore } from '../ports.js';
import { topics, type Wakeups } from '../wakeups.js';

const PORTS = new Set(['', '80', '88', '443', '8443']);

export interface WebhookDeps {
  bots: BotStore;
  updates: UpdateStore;
  wakeups: Wakeups;
  clock: Clock;
  /** GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: webhooks may point at loopback and private networks. */
  allowPrivateWebhooks: boolean;
  /**
   * Resolves a webhook URL's host and says why it may not be used (private
   * address, unresolvable), or undefined when it may. Injected: DNS is I/O.
   */
  checkWebhookUrl: (url: URL) => Promise<string | undefined>;
}

/** The official server's rules for a webhook URL, plus our SSRF check (docs/security.md). */
async function webhookUrl(d: WebhookDeps, raw: string): Promise<string> {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw badRequest('bad webhook: Failed to resolve host: Name or service not known');
  }
  const allowPrivate = d.allowPrivateWebhooks;
  if (u.protocol !== 'https:' && !(allowPrivate && u.protocol === 'http:')) throw badRequest('bad webhook: An HTTPS URL must be provided for webhook');
  if (u.username || u.password) throw badRequest('bad webhook: Webhook URL must not contain user information');
  if (!allowPrivate && !PORTS.has(u.port)) throw badRequest('bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443');
  const problem = await d.checkWebhookUrl(u);
  if (problem) throw badRequest(`bad webhook: ${problem}`);
  return u.href;
}

const dropPending = { drop_pending_updates: bool('drop_pending_updates') };

async function removeWebhook(d: Pick<WebhookDeps, 'bots' | 'updates' | 'wakeups'>, bot: BotRecord, drop: boolean): Promise<Described<true>> {
  if (drop) await d.updates.deleteAll(bot.id);
  if (!bot.webhook) return new Described(true, 'Webhook is already deleted');
  await d.bots.setWebhook(bot.id, null);
  d.wakeups.publish(topics.webhooks, String(bot.id));
  return new Described(true, 'Webhook was deleted');
}

export const setWebhook = (d: WebhookDeps) => method('setWebhook', {
  currentBot: true,
  params: z.object({
    url: str('url'),
    secret_token: str('secret_token'),
    max_connections: int('max_connections'),
    allowed_updates: updateTypes('allowed_updates'),
    ...dropPending,
  }),
  async run({ bot }, p) {
    // An empty URL removes the webhook.
    if (!p.url) return removeWebhook(d, bot, p.drop_pending_updates);
    const now = d.clock.now();
    // Telegram allows about one setWebhook a second.
    if (bot.webhook && now - bot.webhook.setAt < 1000) throw tooManyRequests(1);
    const url = await webhookUrl(d, p.url);
    const secret = p.secret_token || null;
    if (secret !== null && !/^[A-Za-z0-9_-]{1,256}$/.test(secret)) throw badRequest('secret token contains unallowed characters');
    const maxConnections = Math.min(100, Math.max(1, p.max_connections ?? 40));
    const allowed = p.allowed_updates ?? bot.webhook?.allowedUpdates ?? null;
    if (p.drop_pending_updates) await d.updates.deleteAll(bot.id);
    const same = bot.webhook && bot.webhook.url === url && bot.webhook.secretToken === secret && bot.webhook.maxConnections === maxConnections
      && JSON.stringify(bot.webhook.allowedUpdates) === JSON.stringify(allowed);
    await d.bots.setWebhook(bot.id, { url, secretToken: secret, maxConnections, allowedUpdates: allowed, setAt: now });
    if (!bot.webhook) await d.bots.setLastError(bot.id, null, null);
    // A long poll still waiting ends, and the deliverer starts on pending updates.
    d.wakeups.publish(topics.poll(bot.id), 'webhook');
    d.wakeups.publish(topics.webhooks, String(bot.id));
    return new Described(true as const, same ? 'Webhook is already set' : 'Webhook was set');
  },
});

export const deleteWebhook = (d: Pick<WebhookDeps, 'bots' | 'updates' | 'wakeups'>) => method('deleteWebhook', {
  currentBot: true,
  params: z.object(dropPending),
  run: ({ bot }, p) => removeWebhook(d, bot, p.drop_pending_updates),
});

export const getWebhookInfo = (d: { updates: UpdateStore }) => method('getWebhookInfo', {
  currentBot: true,
  params: z.object({}),
  async run({ bot }) {
    const pending = await d.updates.count(bot.id);
    const info: WebhookInfo = { url: bot.webhook?.url ?? '', has_custom_certificate: false, pending_update_count: pending };
    if (bot.lastErrorDate !== null) {
      info.last_error_date = secs(bot.lastErrorDate);
      if (bot.lastErrorMessage) info.last_error_message = bot.lastErrorMessage;
    }
    if (bot.webhook) {
      info.max_connections = bot.webhook.maxConnections;
      if (bot.webhook.allowedUpdates?.length) info.allowed_updates = bot.webhook.allowedUpdates as WebhookInfo['allowed_updates'];
    }
    return info;
  },
});
