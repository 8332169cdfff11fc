import type { FastifyReply } from 'fastify';
import { Described } from '../../core/bot/method.js';
import { botAnswer, sendError } from '../errors.js';

/** `{ok:true,result}` (with the optional description), always application/json. */
export function sendResult(reply: FastifyReply, value: unknown): FastifyReply {
  const body = value instanceof Described ? { ok: true, result: value.result, description: value.description } : { ok: true, result: value };
  return reply.code(200).type('application/json').send(body);
}

/** The error envelope (src/http/errors.ts `botAnswer`) for any thrown value. */
export function sendBotError(reply: FastifyReply, err: unknown): FastifyReply {
  return sendError(reply, botAnswer, err);
}
