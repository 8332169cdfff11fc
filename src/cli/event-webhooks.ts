import type { Config } from '../config.js';
import { invalidRequest, notFound } from '../core/errors.js';
import { systemClock } from '../core/ports.js';
import {
  createEndpoint, DELIVERY_STATUSES, describeAttempt, describeDelivery, describeEndpoint, endpointOrThrow, parseTime,
  replayFailed, resendMessage, rotateEndpointSecret, setEndpointEnabled,
} from '../core/notify/endpoints.js';
import { rfc3339 } from '../core/notify/events.js';
import type { DeliveryStatus, EventStore } from '../core/notify/ports.js';
import { outboundClients } from '../infra/outbound/client.js';
import type { openStorage } from '../store/index.js';
import { parserOptions } from './commands.js';

type Options = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;

/** What main.ts lends the webhook commands (its flag parsing, settings, output and storage). */
export interface CliHelpers {
  parse(args: string[], options: Options): { values: Record<string, unknown> };
  configFrom(values: Record<string, unknown>): Config;
  print(json: boolean, obj: Record<string, unknown>, human: string): void;
  withStorage<T>(config: Config, fn: (s: Awaited<ReturnType<typeof openStorage>>) => Promise<T>): Promise<T>;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const need = (v: unknown, flag: string) => {
  if (typeof v !== 'string' || !v) throw invalidRequest(`--${flag} is required`);
  return v;
};

export function webhookCommands(h: CliHelpers): Record<string, (args: string[]) => Promise<void>> {
  /** Runs `fn` on the outbox port of the configured database. */
  const run = async (args: string[], options: Options, fn: (events: EventStore, values: Record<string, unknown>, config: Config) => Promise<[Record<string, unknown>, string]>) => {
    const { values } = h.parse(args, options);
    const config = h.configFrom(values);
    const [obj, human] = await h.withStorage(config, (s) => fn(s.events, values, config));
    h.print(Boolean(values.json), obj, human);
  };

  return {
    'webhook create': (args) => run(args, parserOptions('webhook create'), async (events, v, config) => {
      const e = await createEndpoint(events, systemClock, {
        url: str(v.url), chatId: str(v['chat-id']), events: (str(v.events) ?? '').split(/[ ,]+/), ordered: v.ordered === true, description: str(v.description),
      }, { checkUrl: outboundClients(config).registered.check });
      const out = { id: e.id, url: e.url, events: e.eventTypes, secret: e.secret, ...(e.chatId ? { chat_id: e.chatId } : {}) };
      return [out, `id: ${e.id}\nsecret: ${e.secret}\n(receivers verify deliveries with this secret; it is shown again only by rotate-secret)`];
    }),
    'webhook list': (args) => run(args, parserOptions('webhook list'), async (events) => {
      const list = await events.endpoints.list();
      return [{ webhooks: list.map((e) => describeEndpoint(e)) },
        list.map((e) => `${e.id}  ${e.url ?? `chat ${e.chatId}`}  [${e.eventTypes.join(',')}]${e.disabledAt !== null ? `  disabled: ${e.disabledReason}` : ''}`).join('\n') || '(no webhooks)'];
    }),
    'webhook enable': (args) => run(args, parserOptions('webhook enable'), async (events, v) => {
      const e = await setEndpointEnabled(events, systemClock, need(v.id, 'id'), true);
      return [describeEndpoint(e), `enabled ${e.id}`];
    }),
    'webhook disable': (args) => run(args, parserOptions('webhook disable'), async (events, v) => {
      const e = await setEndpointEnabled(events, systemClock, need(v.id, 'id'), false);
      return [describeEndpoint(e), `disabled ${e.id}; its pending messages are in the dead-letter list`];
    }),
    'webhook delete': (args) => run(args, parserOptions('webhook delete'), async (events, v) => {
      if (!(await events.endpoints.delete(need(v.id, 'id')))) throw notFound('unknown webhook endpoint');
      return [{ id: v.id, deleted: true }, `deleted ${String(v.id)}`];
    }),
    'webhook rotate-secret': (args) => run(args, parserOptions('webhook rotate-secret'), async (events, v) => {
      const { secret, previousValidUntil } = await rotateEndpointSecret(events, systemClock, need(v.id, 'id'));
      return [{ id: v.id, secret, previous_secret_valid_until: rfc3339(previousValidUntil) }, `secret: ${secret}\n(the previous secret keeps signing until ${rfc3339(previousValidUntil)})`];
    }),
    'webhook messages': (args) => run(args, parserOptions('webhook messages'), async (events, v) => {
      const endpointId = need(v.id, 'id');
      await endpointOrThrow(events, endpointId);
      const status = str(v.status);
      if (status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(status)) throw invalidRequest(`--status must be one of ${DELIVERY_STATUSES.join(', ')}`);
      const limit = v.limit === undefined ? 50 : Number(v.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalidRequest('--limit must be an integer from 1 to 1000');
      const list = await events.deliveries.list(endpointId, {
        limit, ...(status ? { status: status as DeliveryStatus } : {}), ...(v.since !== undefined ? { since: parseTime(v.since, '--since') } : {}),
      });
      return [{ messages: list.map(describeDelivery) },
        list.map((d) => `${d.eventId}  ${d.status}  attempts=${d.attempts}${d.lastStatus !== null ? `  last=${d.lastStatus}` : ''}${d.lastError ? `  ${d.lastError}` : ''}`).join('\n') || '(no messages)'];
    }),
    'webhook inspect': (args) => run(args, parserOptions('webhook inspect'), async (events, v) => {
      const endpointId = need(v.id, 'id');
      const eventId = need(v.message, 'message');
      const d = await events.deliveries.get(endpointId, eventId);
      const event = await events.get(eventId);
      if (!d || !event) throw notFound('unknown message');
      const attempts = await events.deliveries.attempts(endpointId, eventId);
      const out = { ...describeDelivery(d), event: { id: event.id, type: event.type, timestamp: rfc3339(event.createdAt), data: event.data }, attempts: attempts.map(describeAttempt) };
      return [out, JSON.stringify(out, null, 2)];
    }),
    'webhook resend': (args) => run(args, parserOptions('webhook resend'), async (events, v) => {
      await resendMessage(events, systemClock, need(v.id, 'id'), need(v.message, 'message'));
      return [{ message_id: v.message, status: 'pending' }, `queued ${String(v.message)} again`];
    }),
    'webhook replay': (args) => run(args, parserOptions('webhook replay'), async (events, v) => {
      const n = await replayFailed(events, systemClock, need(v.id, 'id'), parseTime(need(v.since, 'since'), '--since'));
      return [{ replayed: n }, `queued ${n} failed message(s) again`];
    }),
  };
}
