import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidRequest, notFound } from '../../core/errors.js';
import { rfc3339, type NotifyEvent } from '../../core/notify/events.js';
import {
  createEndpoint, DELIVERY_STATUSES, describeAttempt, describeDelivery, describeEndpoint, endpointOrThrow, parseTime,
  replayFailed, resendMessage, rotateEndpointSecret, setEndpointEnabled,
} from '../../core/notify/endpoints.js';
import type { DeliveryStatus } from '../../core/notify/ports.js';
import type { Gatehouse } from '../../gatehouse.js';
import { jsonObject, pathParams } from '../input.js';
import {
  ENDPOINT_LIST, ENDPOINT_OUT, ENDPOINT_SECRET, EVENT_LIST, MESSAGE_LIST, MESSAGE_OUT, NO_CONTENT, REPLAYED, RESENT,
} from './admin-schemas.js';

const text = z.string({ error: 'must be a string' });
/** `events` as a JSON array or a comma- or space-separated string. */
const EVENTS = z.union([z.string().transform((v) => v.split(/[ ,]+/).filter(Boolean)), z.array(z.string())], { error: 'must be a list of event types (or "*")' });
/** A JSON number or a string: RFC 3339 or Unix seconds (parseTime). */
const TIME = z.union([z.number(), z.string()], { error: 'must be an RFC 3339 time or a Unix timestamp' }).optional();
const ENDPOINT = jsonObject({
  url: text.nullish(),
  // A Bot API chat id may come as a JSON number.
  chat_id: z.union([text, z.number().int().transform(String)], { error: 'must be a string' }).nullish(),
  events: EVENTS,
  ordered: z.boolean({ error: 'must be a boolean' }).optional(),
  description: text.nullish(),
});
const REPLAY = z.preprocess((v) => v ?? {}, jsonObject({ since: TIME }));
/** Query parameters: one value each. */
const one = text.optional();
const MESSAGES = z.object({ status: one, limit: one, since: one });
const EVENTS_QUERY = z.object({ type: one, limit: one, since: one });
const ID = pathParams('id');
const MSG = pathParams('id', 'msg');

const limitOf = (v: unknown) => {
  if (v === undefined) return 50;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw invalidRequest('limit must be an integer from 1 to 1000');
  return n;
};

const statusOf = (v: unknown): DeliveryStatus | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !(DELIVERY_STATUSES as readonly string[]).includes(v)) throw invalidRequest(`status must be one of ${DELIVERY_STATUSES.join(', ')}`);
  return v as DeliveryStatus;
};

export const describeEvent = (e: NotifyEvent) => ({ id: e.id, type: e.type, version: e.version, timestamp: rfc3339(e.createdAt), data: e.data });

type Id = { Params: { id: string } };
type Msg = { Params: { id: string; msg: string } };

/**
 * Webhook endpoints, the delivery log and replay, under the admin API
 * (registered inside adminRoutes, so its bearer check applies).
 */
export async function eventWebhookRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const events = gh.storage.events;
  app.post('/webhooks', { schema: { body: ENDPOINT, response: { 201: ENDPOINT_OUT } } }, async (req, reply) => {
    const b = req.body as z.output<typeof ENDPOINT>;
    const e = await createEndpoint(events, gh.clock, {
      url: b.url ?? undefined, chatId: b.chat_id ?? undefined, events: b.events, ordered: b.ordered, description: b.description ?? undefined,
    }, { checkUrl: gh.outbound.registered.check });
    return reply.code(201).send(describeEndpoint(e, true));
  });
  app.get('/webhooks', { schema: { response: { 200: ENDPOINT_LIST } } }, async () => ({ webhooks: (await events.endpoints.list()).map((e) => describeEndpoint(e)) }));
  app.get<Id>('/webhooks/:id', { schema: { params: ID, response: { 200: ENDPOINT_OUT } } }, async (req) => describeEndpoint(await endpointOrThrow(events, req.params.id)));
  app.delete<Id>('/webhooks/:id', { schema: { params: ID, response: { 204: NO_CONTENT } } }, async (req, reply) => {
    if (!(await events.endpoints.delete(req.params.id))) throw notFound('unknown webhook endpoint');
    return reply.code(204).send();
  });
  app.post<Id>('/webhooks/:id/enable', { schema: { params: ID, response: { 200: ENDPOINT_OUT } } }, async (req) => describeEndpoint(await setEndpointEnabled(events, gh.clock, req.params.id, true)));
  app.post<Id>('/webhooks/:id/disable', { schema: { params: ID, response: { 200: ENDPOINT_OUT } } }, async (req) => describeEndpoint(await setEndpointEnabled(events, gh.clock, req.params.id, false)));
  app.post<Id>('/webhooks/:id/secret', { schema: { params: ID, response: { 200: ENDPOINT_SECRET } } }, async (req) => {
    const { secret, previousValidUntil } = await rotateEndpointSecret(events, gh.clock, req.params.id);
    return { id: req.params.id, secret, previous_secret_valid_until: rfc3339(previousValidUntil) };
  });

  app.get<Id>('/webhooks/:id/messages', { schema: { params: ID, querystring: MESSAGES, response: { 200: MESSAGE_LIST } } }, async (req) => {
    await endpointOrThrow(events, req.params.id);
    const q = req.query as z.output<typeof MESSAGES>;
    const list = await events.deliveries.list(req.params.id, {
      status: statusOf(q.status), limit: limitOf(q.limit), ...(q.since !== undefined ? { since: parseTime(q.since, 'since') } : {}),
    });
    return { messages: list.map(describeDelivery) };
  });
  app.get<Msg>('/webhooks/:id/messages/:msg', { schema: { params: MSG, response: { 200: MESSAGE_OUT } } }, async (req) => {
    const d = await events.deliveries.get(req.params.id, req.params.msg);
    const event = await events.get(req.params.msg);
    if (!d || !event) throw notFound('unknown message');
    return { ...describeDelivery(d), event: describeEvent(event), attempts: (await events.deliveries.attempts(req.params.id, req.params.msg)).map(describeAttempt) };
  });
  app.post<Msg>('/webhooks/:id/messages/:msg/resend', { schema: { params: MSG, response: { 202: RESENT } } }, async (req, reply) => {
    await resendMessage(events, gh.clock, req.params.id, req.params.msg);
    return reply.code(202).send({ message_id: req.params.msg, status: 'pending' });
  });
  app.post<Id>('/webhooks/:id/replay', { schema: { params: ID, body: REPLAY, response: { 200: REPLAYED } } }, async (req) => {
    const b = req.body as z.output<typeof REPLAY>;
    const since = parseTime(b.since, 'since');
    return { replayed: await replayFailed(events, gh.clock, req.params.id, since) };
  });

  app.get('/events', { schema: { querystring: EVENTS_QUERY, response: { 200: EVENT_LIST } } }, async (req) => {
    const q = req.query as z.output<typeof EVENTS_QUERY>;
    const list = await events.list({
      limit: limitOf(q.limit), ...(q.type ? { type: q.type } : {}), ...(q.since !== undefined ? { since: parseTime(q.since, 'since') } : {}),
    });
    return { events: list.map(describeEvent) };
  });
}
