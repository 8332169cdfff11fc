import type { WebhookPost } from '../../core/bot/bot-webhooks.js';
import type { DestinationCheck, OutboundHttp } from '../../core/outbound.js';

/** Telegram gives a webhook this long to answer. */
const TIMEOUT_MS = 30_000;
/** Enough for any method call a reply body may carry. */
const MAX_REPLY_BYTES = 64 * 1024;

/**
 * setWebhook's destination check, with the official server's descriptions:
 * the host is resolved and every address checked, as Telegram does
 * (src/infra/outbound/ holds the rule, and checks again at every connection).
 */
export function botWebhookChecker(check: DestinationCheck): (url: URL) => Promise<string | undefined> {
  return async (url) => {
    const refusal = await check(url, { resolve: true });
    if (!refusal) return undefined;
    if (refusal.reason === 'address') return `IP address ${refusal.address} is reserved`;
    if (refusal.reason === 'name') return `Host ${refusal.host} is reserved`;
    return 'Failed to resolve host: Name or service not known';
  };
}

/** Webhook deliveries over the outbound client (timeouts, size cap, no redirects, addresses checked at connect). */
export function botWebhookPoster(http: OutboundHttp): WebhookPost {
  return (url, body, headers, signal) => http({
    url, method: 'POST', body, timeoutMs: TIMEOUT_MS, maxBytes: MAX_REPLY_BYTES,
    headers: { 'content-type': 'application/json', ...headers }, ...(signal ? { signal } : {}),
  });
}
