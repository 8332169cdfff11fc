import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BotApi } from '../../core/bot/api.js';
import { botError, notFound } from '../../core/bot/errors.js';
import { UploadedFile, type BotFiles } from '../../core/bot/files.js';
import type { BotParams } from '../../core/bot/params.js';
import { sendBotError, sendResult } from './envelope.js';
import { admittedBot, releaseUpload } from './multipart.js';

/** A repeated query or form parameter counts once, with its last value. */
function lastValues(source: unknown, into: BotParams): void {
  if (!source || typeof source !== 'object') return;
  for (const [name, value] of Object.entries(source)) into[name] = Array.isArray(value) ? value[value.length - 1] : value;
}

/**
 * Query string, then body (form, JSON object or multipart fields): later
 * sources win. The method's schema (src/core/bot/methods.ts) reads only the
 * names it declares, with their types.
 */
function mergedParams(req: FastifyRequest): BotParams {
  const params: BotParams = Object.create(null) as BotParams;
  lastValues(req.query, params);
  const body = req.body;
  if (!body || typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) return params;
  if (/^application\/x-www-form-urlencoded/i.test(req.headers['content-type'] ?? '')) lastValues(body, params);
  else Object.assign(params, body);
  return attached(params);
}

/** `attach://<name>` names the file part `<name>` of the same multipart request (Bot API, "Sending files"). */
function attached(params: BotParams): BotParams {
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== 'string' || !value.startsWith('attach://')) continue;
    const part = params[value.slice('attach://'.length)];
    if (part instanceof UploadedFile) params[name] = part;
  }
  return params;
}

/** Aborted when the client goes away before the answer (a long poll whose bot stopped); made when a method first asks. */
function clientGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  // The connection may have closed while the body was read.
  if (reply.raw.destroyed || reply.request.raw.socket.destroyed) ac.abort();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

/**
 * `/bot<TOKEN>/<method>` and `/bot<TOKEN>/test/<method>` (the test
 * environment shares our one server), GET or POST; other verbs 501.
 */
export async function botApiRoutes(app: FastifyInstance, api: BotApi, files: BotFiles): Promise<void> {
  // getFile's file_path, with the bot's token: its bytes, or the Bot API's 404 for anything else.
  app.get('/file/:bot/*', async (req, reply) => {
    const { bot: segment, '*': path } = req.params as { bot: string; '*': string };
    if (!segment.startsWith('bot')) return sendBotError(reply, notFound());
    const bot = await api.authenticate(segment.slice(3), req.ip);
    const found = await files.download(bot, path);
    if (!found) return sendBotError(reply, notFound());
    return reply.type(found.file.mimeType ?? 'application/octet-stream').header('content-length', found.file.size)
      .header('x-content-type-options', 'nosniff').header('content-disposition', 'attachment').send(found.body);
  });
  const handle = async (req: FastifyRequest, reply: FastifyReply) => {
    const { bot: segment, method } = req.params as { bot: string; method: string };
    if (!segment.startsWith('bot') || !method) return sendBotError(reply, notFound());
    const origin = { address: req.ip, signal: () => clientGone(reply) };
    // A multipart call was authenticated before its body was read (multipart.ts).
    const bot = admittedBot(req);
    try {
      const result = bot ? await api.callAs(bot, method, mergedParams(req), origin.signal) : await api.call(segment.slice(3), method, mergedParams(req), origin);
      return sendResult(reply, result);
    } finally {
      // Uploads the method kept are linked into the store by now; the rest go, whether it succeeded or threw.
      await releaseUpload(req);
    }
  };
  // A path outside /bot… (`/client/chats%2F`) names no Bot API method, whatever the verb.
  const notImplemented = async (req: FastifyRequest, reply: FastifyReply) =>
    sendBotError(reply, (req.params as { bot: string }).bot.startsWith('bot') ? botError(501) : notFound());
  for (const url of ['/:bot/:method', '/:bot/test/:method']) {
    // No implicit HEAD: it would run the method (a HEAD could send a message).
    app.route({ method: ['GET', 'POST'], url, handler: handle, exposeHeadRoute: false });
    app.route({ method: ['HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'], url, handler: notImplemented });
  }
}
