import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BotApiError, notFound } from '../../core/bot/errors.js';
import type { BotParams } from '../../core/bot/params.js';
import type { BotService } from '../../core/bot/service.js';
import { sendBotError, sendResult } from './envelope.js';

/** Query string, then body (form, JSON object or multipart fields): later sources win. */
function mergedParams(req: FastifyRequest): BotParams {
  const query = (req.query ?? {}) as BotParams;
  const body = req.body;
  const fromBody = body && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body) ? (body as BotParams) : {};
  return { ...query, ...fromBody };
}

/** Aborted when the client goes away before the answer (a long poll whose bot stopped). */
function clientGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

/**
 * `/bot<TOKEN>/<method>` and `/bot<TOKEN>/test/<method>` (the test
 * environment shares our one server), GET or POST; other verbs 501.
 */
export async function botApiRoutes(app: FastifyInstance, service: BotService): Promise<void> {
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const { bot: segment, method } = req.params as { bot: string; method: string };
    if (!segment.startsWith('bot') || !method) return sendBotError(reply, notFound());
    try {
      const result = await service.call(segment.slice(3), method, mergedParams(req), clientGone(reply));
      return sendResult(reply, result);
    } catch (e) {
      if (e instanceof BotApiError) return sendBotError(reply, e);
      throw e;
    }
  };
  const notImplemented = async (_req: FastifyRequest, reply: FastifyReply) => sendBotError(reply, new BotApiError(501, 'Not Implemented'));
  for (const url of ['/:bot/:method', '/:bot/test/:method']) {
    // No implicit HEAD: it would run the method (a HEAD could send a message).
    app.route({ method: ['GET', 'POST'], url, handler: handle, exposeHeadRoute: false });
    app.route({ method: ['HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url, handler: notImplemented });
  }
}
