import { GatehouseError, type ErrorCode } from '../errors.js';

/**
 * Bot API failures are `GatehouseError`s. The envelope
 * `{ok:false, error_code, description, parameters?}` is made in one place
 * (src/http/errors.ts `botAnswer`): `error_code` is the HTTP status, and
 * `description` is the status's reason phrase followed by the error's own
 * description, so `badRequest('chat not found')` reads
 * `Bad Request: chat not found`, word for word what clients and people
 * search for. A wait is `retryAfterSeconds` (`parameters.retry_after`).
 */
const CODES: Record<number, ErrorCode> = {
  400: 'invalid_request', 401: 'invalid_token', 403: 'access_denied', 404: 'not_found', 409: 'conflict',
  429: 'too_many_requests', 500: 'server_error', 501: 'not_implemented', 503: 'temporarily_unavailable',
};

/** Any Bot API status with the words after its reason phrase (none: the reason phrase alone). */
export const botError = (status: number, description?: string, retryAfterSeconds?: number) =>
  new GatehouseError(CODES[status] ?? 'invalid_request', description, { status, retryAfterSeconds });

export const badRequest = (detail: string) => botError(400, detail);
export const unauthorized = () => botError(401);
export const forbidden = (detail: string) => botError(403, detail);
export const notFound = (detail?: string) => botError(404, detail);
export const conflict = (detail: string) => botError(409, detail);
export const tooManyRequests = (retryAfter: number) => botError(429, `retry after ${retryAfter}`, retryAfter);

export const WEBHOOK_ACTIVE = "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
export const TERMINATED = 'terminated by other getUpdates request; make sure that only one bot instance is running';
