import type { ApiError, ResponseParameters } from '@grammyjs/types';

/**
 * A Bot API failure: `{ok:false, error_code, description, parameters?}` with
 * the HTTP status equal to `error_code`, as the official server answers.
 * The descriptions are the ones clients and people search for, word for word.
 */
export class BotApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: ResponseParameters,
  ) {
    super(description);
    this.name = 'BotApiError';
  }

  toJSON(): ApiError {
    return { ok: false, error_code: this.code, description: this.description, ...(this.parameters ? { parameters: this.parameters } : {}) };
  }
}

export const badRequest = (detail: string) => new BotApiError(400, `Bad Request: ${detail}`);
export const unauthorized = () => new BotApiError(401, 'Unauthorized');
export const notFound = (detail?: string) => new BotApiError(404, detail ? `Not Found: ${detail}` : 'Not Found');
export const conflict = (detail: string) => new BotApiError(409, `Conflict: ${detail}`);
export const tooManyRequests = (retryAfter: number) =>
  new BotApiError(429, `Too Many Requests: retry after ${retryAfter}`, { retry_after: retryAfter });

export const WEBHOOK_ACTIVE = "can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first";
export const TERMINATED = 'terminated by other getUpdates request; make sure that only one bot instance is running';
