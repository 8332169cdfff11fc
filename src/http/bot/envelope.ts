import type { FastifyReply } from 'fastify';
import { BotApiError } from '../../core/bot/errors.js';
import { Described } from '../../core/bot/methods/webhook.js';

/** `{ok:true,result}` (with the optional description), always application/json. */
export function sendResult(reply: FastifyReply, value: unknown): FastifyReply {
  const body = value instanceof Described ? { ok: true, result: value.result, description: value.description } : { ok: true, result: value };
  return reply.code(200).type('application/json').send(body);
}

/** The error envelope with the HTTP status equal to error_code; 429 also carries Retry-After. */
export function sendBotError(reply: FastifyReply, err: BotApiError): FastifyReply {
  if (err.parameters?.retry_after !== undefined) reply.header('retry-after', String(err.parameters.retry_after));
  return reply.code(err.code).type('application/json').send(err.toJSON());
}

/** Framework errors (malformed body, oversize, media type) in the Bot API's words; never a 500 for bad input. */
export function frameworkError(error: unknown): BotApiError | undefined {
  const status = (error as { statusCode?: number }).statusCode;
  const code = (error as { code?: string }).code;
  if (!status || status < 400 || status >= 500) return undefined;
  if (status === 413) return new BotApiError(413, 'Request Entity Too Large');
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new BotApiError(400, "Bad Request: can't parse JSON object");
  if (status === 415) return new BotApiError(400, 'Bad Request: unsupported Content-Type');
  return new BotApiError(400, `Bad Request: ${(error as Error).message || 'invalid request'}`);
}
