import { invalidRequest, notFound } from '../errors.js';
import type { Clock } from '../ports.js';
import { EVENT_TYPES, PERSONAL_EVENT_TYPES, isEventType, newId, rfc3339 } from './events.js';
import type { Attempt, Delivery, DeliveryStatus, Endpoint, EventStore } from './ports.js';
import { newWebhookSecret } from './signing.js';
import type { DestinationCheck } from '../outbound.js';

export interface EndpointInput {
  url?: string | undefined;
  /** An operations chat (a Bot API chat id) instead of a URL. */
  chatId?: string | undefined;
  events: string[];
  ordered?: boolean | undefined;
  description?: string | undefined;
}

/** How long a rotated-out secret keeps signing, so receivers can roll over. */
export const SECRET_ROTATION_GRACE_MS = 24 * 3600_000;

function eventList(events: string[]): string[] {
  const list = [...new Set(events.map((e) => e.trim()).filter(Boolean))];
  if (list.length === 0) throw invalidRequest(`events is required: a list of event types or * (known: ${EVENT_TYPES.join(', ')})`);
  const unknown = list.filter((e) => e !== '*' && !isEventType(e));
  if (unknown.length) throw invalidRequest(`unknown event type: ${unknown.join(', ')}`);
  return list.includes('*') ? ['*'] : list;
}

const CHAT_ID = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/;

/** Why a webhook URL is refused, or undefined: its form here, its destination by the outbound module's rule. */
export async function webhookUrlProblem(raw: string, check: DestinationCheck | undefined): Promise<string | undefined> {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must use http or https';
  if (u.username || u.password) return 'url must not carry credentials';
  if (u.hash) return 'url must not have a fragment';
  if (raw.length > 2000) return 'url is too long';
  if (!check) return 'webhook URLs cannot be checked here';
  // Not resolved now: DNS may be set up later, and every delivery checks the addresses it connects to.
  const refusal = await check(u);
  if (refusal?.reason === 'address') return `url points at a loopback or private-network address (${refusal.range}; set GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS=true to allow)`;
  if (refusal) return 'url points at a local host name (set GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS=true to allow)';
  return undefined;
}

/** `checkUrl`: the outbound module's destination check (needed for webhook endpoints, not for chats). */
export async function createEndpoint(events: EventStore, clock: Clock, input: EndpointInput, opts: { checkUrl?: DestinationCheck; userId?: string }): Promise<Endpoint> {
  const eventTypes = eventList(input.events);
  const url = input.url?.trim() || null;
  const chatId = input.chatId?.trim() || null;
  if (!url === !chatId) throw invalidRequest('give either url (a webhook) or chat_id (a chat), not both');
  if (url) {
    const problem = await webhookUrlProblem(url, opts.checkUrl);
    if (problem) throw invalidRequest(problem);
  }
  if (chatId && !CHAT_ID.test(chatId)) throw invalidRequest('chat_id must be a numeric chat id or @channelusername');
  const description = input.description?.trim() || null;
  if (description && description.length > 200) throw invalidRequest('description: at most 200 characters');
  const now = clock.now();
  const endpoint: Endpoint = {
    id: newId('ep_', now),
    kind: url ? 'webhook' : 'chat',
    url,
    chatId,
    userId: opts.userId ?? null,
    eventTypes,
    description,
    secret: newWebhookSecret(),
    previousSecret: null,
    previousSecretExpiresAt: null,
    ordered: input.ordered === true,
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  };
  await events.endpoints.create(endpoint);
  return endpoint;
}

/** A person's own chat, receiving their security events (docs/events.md, Chat notifications). */
export function personalChatInput(chatId: string): EndpointInput {
  return { chatId, events: PERSONAL_EVENT_TYPES, description: 'personal security notifications' };
}

export async function endpointOrThrow(events: EventStore, id: string): Promise<Endpoint> {
  const e = await events.endpoints.get(id);
  if (!e) throw notFound('unknown webhook endpoint');
  return e;
}

/** New secret; the old one keeps signing (a second signature) for a day. */
export async function rotateEndpointSecret(events: EventStore, clock: Clock, id: string): Promise<{ secret: string; previousValidUntil: number }> {
  const e = await endpointOrThrow(events, id);
  const now = clock.now();
  const secret = newWebhookSecret();
  const previousValidUntil = now + SECRET_ROTATION_GRACE_MS;
  await events.endpoints.update(id, { secret, previousSecret: e.secret, previousSecretExpiresAt: previousValidUntil }, now);
  return { secret, previousValidUntil };
}

export async function setEndpointEnabled(events: EventStore, clock: Clock, id: string, enabled: boolean): Promise<Endpoint> {
  await endpointOrThrow(events, id);
  const now = clock.now();
  if (enabled) await events.endpoints.update(id, { disabledAt: null, disabledReason: null, failingSince: null }, now);
  else {
    await events.endpoints.update(id, { disabledAt: now, disabledReason: 'disabled by an administrator' }, now);
    await events.deliveries.failPending(id, 'endpoint disabled', now);
  }
  return endpointOrThrow(events, id);
}

export async function resendMessage(events: EventStore, clock: Clock, endpointId: string, eventId: string): Promise<void> {
  await endpointOrThrow(events, endpointId);
  if (!(await events.deliveries.resend(endpointId, eventId, clock.now()))) throw notFound('unknown message');
}

export async function replayFailed(events: EventStore, clock: Clock, endpointId: string, since: number): Promise<number> {
  await endpointOrThrow(events, endpointId);
  return events.deliveries.replayFailed(endpointId, since, clock.now());
}

/** ECMAScript's time range (±100,000,000 days): beyond it a time is no time, and a database integer overflows. */
const MAX_TIME_MS = 8.64e15;

/** A time given as RFC 3339 or Unix milliseconds/seconds, as whole milliseconds. */
export function parseTime(value: unknown, name: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const ms = Math.floor(value < 1e11 ? value * 1000 : value);
    if (Math.abs(ms) <= MAX_TIME_MS) return ms;
  }
  if (typeof value === 'string' && value.trim()) {
    const v = value.trim();
    if (/^\d+$/.test(v)) return parseTime(Number(v), name);
    const t = Date.parse(v);
    if (!Number.isNaN(t)) return t;
  }
  throw invalidRequest(`${name} must be an RFC 3339 time or a Unix timestamp`);
}

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

/** The endpoint as the CLI and the admin API show it; the secret only when asked. */
export function describeEndpoint(e: Endpoint, withSecret = false): Record<string, unknown> {
  return {
    id: e.id,
    url: e.url,
    ...(e.chatId ? { chat_id: e.chatId } : {}),
    events: e.eventTypes,
    ...(withSecret ? { secret: e.secret } : {}),
    ordered: e.ordered,
    description: e.description,
    enabled: e.disabledAt === null,
    ...(e.disabledAt !== null ? { disabled_at: rfc3339(e.disabledAt), disabled_reason: e.disabledReason } : {}),
    ...(e.failingSince !== null ? { failing_since: rfc3339(e.failingSince) } : {}),
    created_at: rfc3339(e.createdAt),
  };
}

export function describeDelivery(d: Delivery): Record<string, unknown> {
  return {
    message_id: d.eventId,
    status: d.status,
    attempts: d.attempts,
    ...(d.status === 'pending' ? { next_attempt_at: rfc3339(d.nextAttemptAt) } : {}),
    last_status: d.lastStatus,
    last_error: d.lastError,
    created_at: rfc3339(d.createdAt),
    ...(d.deliveredAt !== null ? { delivered_at: rfc3339(d.deliveredAt) } : {}),
  };
}

export function describeAttempt(a: Attempt): Record<string, unknown> {
  return {
    attempt: a.attempt,
    at: rfc3339(a.startedAt),
    ok: a.ok,
    status: a.statusCode,
    duration_ms: a.durationMs,
    error: a.error,
    response: a.response,
  };
}
