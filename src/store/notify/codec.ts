import type { NotifyEvent } from '../../core/notify/events.js';
import type { Attempt, Delivery, DeliveryStatus, Endpoint, EndpointKind } from '../../core/notify/ports.js';
import type { SecretBox } from '../../core/secret-box.js';
import { words } from '../codec.js';
import { ENDPOINT_PREVIOUS_SECRET, ENDPOINT_SECRET } from '../secrets/sealed.js';
import type { NotifyEventsTable, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../schema.js';

export const deliveryId = (endpointId: string, eventId: string) => `${endpointId}:${eventId}`;

export const toEvent = (r: NotifyEventsTable): NotifyEvent => ({
  id: r.id, type: r.type, version: r.version, userId: r.user_id, data: JSON.parse(r.data) as Record<string, unknown>, createdAt: r.created_at,
});

/** Secrets are opened through `secrets`, which remembers them: the worker reads endpoints at every delivery attempt. */
export const toEndpoint = (r: WebhookEndpointsTable, secrets: SecretBox): Endpoint => ({
  id: r.id, kind: r.kind as EndpointKind, url: r.url, chatId: r.chat_id, userId: r.user_id, eventTypes: words(r.event_types),
  description: r.description, secret: secrets.open(r.secret, ENDPOINT_SECRET.aad(r.id)),
  previousSecret: secrets.openNullable(r.previous_secret, ENDPOINT_PREVIOUS_SECRET.aad(r.id)), previousSecretExpiresAt: r.previous_secret_expires_at,
  ordered: r.ordered === 1, disabledAt: r.disabled_at, disabledReason: r.disabled_reason, failingSince: r.failing_since,
  createdAt: r.created_at, updatedAt: r.updated_at,
});

export const toDelivery = (r: WebhookDeliveriesTable): Delivery => ({
  endpointId: r.endpoint_id, eventId: r.event_id, status: r.status as DeliveryStatus, attempts: r.attempts, retryBase: r.retry_base,
  nextAttemptAt: r.next_attempt_at, lastStatus: r.last_status, lastError: r.last_error, createdAt: r.created_at, updatedAt: r.updated_at,
  deliveredAt: r.delivered_at,
});

export const toAttempt = (r: WebhookAttemptsTable): Attempt => ({
  endpointId: r.endpoint_id, eventId: r.event_id, attempt: r.attempt, startedAt: r.started_at, durationMs: r.duration_ms,
  statusCode: r.status_code, error: r.error, response: r.response, ok: r.ok === 1,
});
