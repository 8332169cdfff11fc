/**
 * What the admin API answers, as zod schemas beside the routes that send it
 * (admin-routes.ts, event-webhook-routes.ts put them in `schema.response`).
 * They are the answers' documentation: GET /admin/openapi.json is made from
 * them and from the routes' input schemas (openapi.ts), and
 * test/admin/openapi.test.ts checks real answers against them. They do not
 * filter what is sent: the admin context serialises with JSON.stringify.
 */
import { z } from 'zod';

const time = z.string().describe('RFC 3339 time');
const nullableText = z.string().nullable();

/** RFC 6749 §5.2 shape: every admin error (400 invalid_request, 401 invalid_token, 404 not_found, 429). */
export const ADMIN_ERROR = z.object({
  error: z.string(),
  error_description: z.string().optional(),
});

/** A registered client as the admin API and `gatehouse client create --json` describe it (RFC 7591 names). */
export const CLIENT_OUT = z.object({
  client_id: z.string(),
  client_secret: z.string().optional().describe('only when it was just made: shown once, stored hashed'),
  client_name: z.string(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  scope: z.string(),
  token_endpoint_auth_method: z.string(),
  trusted: z.boolean(),
  introspect: z.boolean(),
  domain: nullableText,
  token_format: z.string(),
  tls_client_certificate_thumbprint: z.string().optional(),
  allowed_addresses: z.array(z.string()).optional(),
  post_logout_redirect_uris: z.array(z.string()),
  backchannel_logout_uri: nullableText,
  id_token_signed_response_alg: z.string().optional(),
  require_pushed_authorization_requests: z.boolean().optional(),
  dpop_bound_access_tokens: z.boolean().optional(),
  public_token_exchange: z.boolean().optional(),
  jwks_uri: z.string().optional(),
  jwks: z.record(z.string(), z.unknown()).optional(),
  resources: z.array(z.string()).optional(),
  backchannel_token_delivery_mode: z.string().optional(),
  backchannel_client_notification_endpoint: z.string().optional(),
}).meta({ id: 'Client' });

export const CLIENT_LIST = z.object({ clients: z.array(CLIENT_OUT) });
export const CLIENT_SECRET = z.object({
  client_id: z.string(),
  client_secret: z.string(),
  previous_secret_valid_for: z.number().int().describe('seconds the previous secret is still accepted'),
});
export const USER_OUT = z.object({ id: z.string(), username: z.string(), email: z.string() });
export const KEY_OUT = z.object({ kid: z.string(), alg: z.string() });

/** A notification endpoint (docs/events.md); `secret` only when created. */
export const ENDPOINT_OUT = z.object({
  id: z.string(),
  url: nullableText,
  chat_id: z.string().optional(),
  events: z.array(z.string()),
  secret: z.string().optional().describe('whsec_… (Standard Webhooks); only in the answer that created it'),
  ordered: z.boolean(),
  description: nullableText,
  enabled: z.boolean(),
  disabled_at: time.optional(),
  disabled_reason: nullableText.optional(),
  failing_since: time.optional(),
  created_at: time,
}).meta({ id: 'WebhookEndpoint' });

export const ENDPOINT_LIST = z.object({ webhooks: z.array(ENDPOINT_OUT) });
export const ENDPOINT_SECRET = z.object({ id: z.string(), secret: z.string(), previous_secret_valid_until: time });

export const DELIVERY_OUT = z.object({
  message_id: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  next_attempt_at: time.optional(),
  last_status: z.number().int().nullable(),
  last_error: nullableText,
  created_at: time,
  delivered_at: time.optional(),
}).meta({ id: 'Delivery' });

export const EVENT_OUT = z.object({
  id: z.string(),
  type: z.string(),
  version: z.number().int(),
  timestamp: time,
  data: z.record(z.string(), z.unknown()),
}).meta({ id: 'Event' });

export const ATTEMPT_OUT = z.object({
  attempt: z.number().int(),
  at: time,
  ok: z.boolean(),
  status: z.number().int().nullable(),
  duration_ms: z.number(),
  error: nullableText,
  response: nullableText,
});

export const MESSAGE_LIST = z.object({ messages: z.array(DELIVERY_OUT) });
export const MESSAGE_OUT = DELIVERY_OUT.extend({ event: EVENT_OUT, attempts: z.array(ATTEMPT_OUT) });
export const RESENT = z.object({ message_id: z.string(), status: z.literal('pending') });
export const REPLAYED = z.object({ replayed: z.number().int() });
export const EVENT_LIST = z.object({ events: z.array(EVENT_OUT) });
/** 204: no body. */
export const NO_CONTENT = z.null().describe('no content');
