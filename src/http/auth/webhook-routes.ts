import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InputError } from '../../core/admin.js';
import { rfc3339, type NotifyEvent } from '../../core/notify/events.js';
import {
  createEndpoint, DELIVERY_STATUSES, describeAttempt, describeDelivery, describeEndpoint, endpointOrThrow, NotFoundError, parseTime,
  replayFailed, resendMessage, rotateEndpointSecret, setEndpointEnabled,
} from '../../core/notify/endpoints.js';
import type { DeliveryStatus } from '../../core/notify/ports.js';
import type { Gatehouse } from '../../gatehouse.js';

const bodyOf = (req: FastifyRequest): Record<string, unknown> => {
  const b = req.body ?? {};
  if (typeof b !== 'object' || Array.isArray(b)) throw new InputError('the body must be a JSON object');
  return b as Record<string, unknown>;
};

const optString = (b: Record<string, unknown>, name: string): string | undefined => {
  const v = b[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && name === 'chat_id') return String(v);
  if (typeof v !== 'string') throw new InputError(`${name} must be a string`);
  return v;
};

/** `events` as a JSON array or a comma- or space-separated string. */
export function eventsOf(v: unknown): string[] {
  if (typeof v === 'string') return v.split(/[ ,]+/).filter(Boolean);
  if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v as string[];
  throw new InputError('events must be a list of event types (or "*")');
}

const limitOf = (v: unknown) => {
  if (v === undefined) return 50;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InputError('limit must be an integer from 1 to 1000');
  return n;
};

const statusOf = (v: unknown): DeliveryStatus | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(DELIVERY_STATUSES as readonly string[]).includes(v)) throw new InputError(`status must be one of ${DELIVERY_STATUSES.join(', ')}`);
  return v as DeliveryStatus;
};

export const describeEvent = (e: NotifyEvent) => ({ id: e.id, type: e.type, version: e.version, timestamp: rfc3339(e.createdAt), data: e.data });

type Id = { Params: { id: string } };
type Msg = { Params: { id: string; msg: string } };

/**
 * Webhook endpoints, the delivery log and replay, under the admin API
 * (registered inside adminRoutes, so its bearer check applies).
 */
export async function webhookRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const events = gh.storage.events;
  app.setErrorHandler((err, _req, reply: FastifyReply) => {
    if (err instanceof NotFoundError) return reply.code(404).send({ error: 'not_found', error_description: err.message });
    if (err instanceof InputError) return reply.code(400).send({ error: 'invalid_request', error_description: err.message });
    throw err;
  });

  app.post('/webhooks', async (req, reply) => {
    const b = bodyOf(req);
    if (b.ordered !== undefined && typeof b.ordered !== 'boolean') throw new InputError('ordered must be a boolean');
    const e = await createEndpoint(events, gh.clock, {
      url: optString(b, 'url'), chatId: optString(b, 'chat_id'), events: eventsOf(b.events), ordered: b.ordered as boolean | undefined,
      description: optString(b, 'description'),
    }, { allowPrivate: gh.config.allowPrivateWebhooks });
    return reply.code(201).send(describeEndpoint(e, true));
  });
  app.get('/webhooks', async () => ({ webhooks: (await events.endpoints.list()).map((e) => describeEndpoint(e)) }));
  app.get<Id>('/webhooks/:id', async (req) => describeEndpoint(await endpointOrThrow(events, req.params.id)));
  app.delete<Id>('/webhooks/:id', async (req, reply) => {
    if (!(await events.endpoints.delete(req.params.id))) throw new NotFoundError('unknown webhook endpoint');
    return reply.code(204).send();
  });
  app.post<Id>('/webhooks/:id/enable', async (req) => describeEndpoint(await setEndpointEnabled(events, gh.clock, req.params.id, true)));
  app.post<Id>('/webhooks/:id/disable', async (req) => describeEndpoint(await setEndpointEnabled(events, gh.clock, req.params.id, false)));
  app.post<Id>('/webhooks/:id/secret', async (req) => {
    const { secret, previousValidUntil } = await rotateEndpointSecret(events, gh.clock, req.params.id);
    return { id: req.params.id, secret, previous_secret_valid_until: rfc3339(previousValidUntil) };
  });

  app.get<Id>('/webhooks/:id/messages', async (req) => {
    await endpointOrThrow(events, req.params.id);
    const q = (req.query ?? {}) as Record<string, unknown>;
    const list = await events.deliveries.list(req.params.id, {
      status: statusOf(q.status), limit: limitOf(q.limit), ...(q.since !== undefined ? { since: parseTime(q.since, 'since') } : {}),
    });
    return { messages: list.map(describeDelivery) };
  });
  app.get<Msg>('/webhooks/:id/messages/:msg', async (req) => {
    const d = await events.deliveries.get(req.params.id, req.params.msg);
    const event = await events.get(req.params.msg);
    if (!d || !event) throw new NotFoundError('unknown message');
    return { ...describeDelivery(d), event: describeEvent(event), attempts: (await events.deliveries.attempts(req.params.id, req.params.msg)).map(describeAttempt) };
  });
  app.post<Msg>('/webhooks/:id/messages/:msg/resend', async (req, reply) => {
    await resendMessage(events, gh.clock, req.params.id, req.params.msg);
    return reply.code(202).send({ message_id: req.params.msg, status: 'pending' });
  });
  app.post<Id>('/webhooks/:id/replay', async (req) => {
    const b = bodyOf(req);
    const since = parseTime(b.since, 'since');
    return { replayed: await replayFailed(events, gh.clock, req.params.id, since) };
  });

  app.get('/events', async (req) => {
    const q = (req.query ?? {}) as Record<string, unknown>;
    if (q.type !== undefined && typeof q.type !== 'string') throw new InputError('type must be a string');
    const list = await events.list({
      limit: limitOf(q.limit), ...(q.type ? { type: q.type as string } : {}), ...(q.since !== undefined ? { since: parseTime(q.since, 'since') } : {}),
    });
    return { events: list.map(describeEvent) };
  });
}
