import type { WebhookInfo } from '@grammyjs/types';
import { badRequest, tooManyRequests } from '../errors.js';
import type { MethodContext } from '../methods.js';
import { bool, int, str, stringList, type BotParams } from '../params.js';
import { secs } from '../service.js';
import { topics } from '../wakeups.js';

/** A result with the optional `description` of the envelope ("Webhook was set"). */
export class Described<T> {
  constructor(readonly result: T, readonly description: string) {}
}

const PORTS = new Set(['', '80', '88', '443', '8443']);

/** The official server's rules for a webhook URL, plus our SSRF check (INTERFACE.md). */
async function webhookUrl(ctx: MethodContext, raw: string): Promise<string> {
  let u: URL;
  try {
    u = new URL(raw.trim());
  } catch {
    throw badRequest('bad webhook: Failed to resolve host: Name or service not known');
  }
  const allowPrivate = ctx.service.deps.config.allowPrivateWebhooks;
  if (u.protocol !== 'https:' && !(allowPrivate && u.protocol === 'http:')) throw badRequest('bad webhook: An HTTPS URL must be provided for webhook');
  if (u.username || u.password) throw badRequest('bad webhook: Webhook URL must not contain user information');
  if (!allowPrivate && !PORTS.has(u.port)) throw badRequest('bad webhook: Webhook can be set up only on ports 80, 88, 443 or 8443');
  const problem = await ctx.service.deps.checkWebhookUrl(u);
  if (problem) throw badRequest(`bad webhook: ${problem}`);
  return u.href;
}

export async function setWebhook(ctx: MethodContext, p: BotParams): Promise<Described<true>> {
  const { service, bot } = ctx;
  const { storage, clock, wakeups } = service.deps;
  const raw = str(p, 'url') ?? '';
  if (!raw) return deleteWebhook(ctx, p);
  const now = clock.now();
  // Telegram allows about one setWebhook a second.
  if (bot.webhook && now - bot.webhook.setAt < 1000) throw tooManyRequests(1);
  const url = await webhookUrl(ctx, raw);
  const secret = str(p, 'secret_token') || null;
  if (secret !== null && !/^[A-Za-z0-9_-]{1,256}$/.test(secret)) throw badRequest('secret token contains unallowed characters');
  const maxConnections = Math.min(100, Math.max(1, int(p, 'max_connections', 40)));
  const allowed = stringList(p, 'allowed_updates') ?? bot.webhook?.allowedUpdates ?? null;
  if (bool(p, 'drop_pending_updates')) await storage.updates.deleteAll(bot.id);
  const same = bot.webhook && bot.webhook.url === url && bot.webhook.secretToken === secret && bot.webhook.maxConnections === maxConnections
    && JSON.stringify(bot.webhook.allowedUpdates) === JSON.stringify(allowed);
  await storage.bots.setWebhook(bot.id, { url, secretToken: secret, maxConnections, allowedUpdates: allowed, setAt: now });
  if (!bot.webhook) await storage.bots.setLastError(bot.id, null, null);
  // A long poll still waiting ends, and the deliverer starts on pending updates.
  wakeups.publish(topics.poll(bot.id), 'webhook');
  wakeups.publish(topics.webhooks, String(bot.id));
  return new Described(true, same ? 'Webhook is already set' : 'Webhook was set');
}

export async function deleteWebhook({ service, bot }: MethodContext, p: BotParams): Promise<Described<true>> {
  const { storage, wakeups } = service.deps;
  if (bool(p, 'drop_pending_updates')) await storage.updates.deleteAll(bot.id);
  if (!bot.webhook) return new Described(true, 'Webhook is already deleted');
  await storage.bots.setWebhook(bot.id, null);
  wakeups.publish(topics.webhooks, String(bot.id));
  return new Described(true, 'Webhook was deleted');
}

export async function getWebhookInfo({ service, bot }: MethodContext): Promise<WebhookInfo> {
  const pending = await service.deps.storage.updates.count(bot.id);
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
}
