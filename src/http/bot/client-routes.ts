import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { BotFiles } from '../../core/bot/files.js';
import type { ChatClient, ChatViewer } from '../../core/bot/people.js';
import { GatehouseError, invalidRequest, invalidToken, notFound, unsupportedGrantType } from '../../core/errors.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { PARAMS, validateWithZod } from '../input.js';
import { chatClientAnswer, handlerFor, sendError } from '../errors.js';
import { CHAT_PAGE_CLIENT_ID } from '../../core/bot/chat-page-client.js';

export const CHAT_SCOPE = 'chat';

/** An RFC 6750 §3 refusal naming the scope this API needs. */
const challenge = (bare = false) => ({ challenge: { scheme: 'Bearer' as const, scope: CHAT_SCOPE, bare } });

function bearerError(reply: FastifyReply, error: GatehouseError): FastifyReply {
  return sendError(reply, chatClientAnswer, error);
}

/**
 * The signed-in user behind a bearer token with scope `chat` (RFC 6750 §2.1), and the
 * client it was issued to (which chats it may see: src/core/bot/notify-bot.ts), or
 * undefined after answering.
 */
async function chatUser(gh: Gatehouse, req: FastifyRequest, reply: FastifyReply): Promise<ChatViewer | undefined> {
  const header = req.headers.authorization;
  const m = header ? /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim()) : null;
  if (!header) {
    bearerError(reply, invalidToken('a bearer access token with scope chat is required', challenge(true)));
    return undefined;
  }
  if (!m) {
    bearerError(reply, invalidRequest('malformed Authorization header', challenge()));
    return undefined;
  }
  const info = await gh.inspector.inspect(m[1]!);
  if (!info || !info.active || info.kind !== 'access_token') {
    bearerError(reply, invalidToken('the access token is not valid', challenge()));
    return undefined;
  }
  if (!info.scope.includes(CHAT_SCOPE) || !info.userId) {
    bearerError(reply, new GatehouseError('insufficient_scope', 'the token needs scope chat and a signed-in user', challenge()));
    return undefined;
  }
  return { userId: info.userId, clientId: info.clientId };
}

/** Any error of this API in its `{error, error_description}` shape (src/http/errors.ts). */
function sendClientError(reply: FastifyReply, e: unknown): FastifyReply {
  return sendError(reply, chatClientAnswer, e);
}

const nonNegative = (v: string | undefined, name: string, max: number): number => {
  if (v === undefined || v === '') return 0;
  if (!/^\d{1,15}$/.test(v)) throw invalidRequest(`${name} must be a non-negative integer`);
  return Math.min(Number(v), max);
};

/** Aborted when the person's client goes away before the answer. */
function clientGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac.signal;
}

/** The parameters of each route, checked before its handler runs (src/http/input.ts). */
const one = z.string({ error: 'must be a string' }).optional();
const BOT = z.object({ bot: z.string() });
const SEND = {
  params: BOT,
  querystring: z.object({ text: one }),
  body: z.preprocess((v) => v ?? {}, z.object({ text: one }, { error: 'the body must be a JSON object or a form' })),
};
const READ = { params: BOT, querystring: z.object({ after: one, timeout: one }) };
const PRESS = {
  params: BOT,
  body: z.preprocess((v) => v ?? {}, z.object({ message_id: z.union([z.number(), z.string()], { error: 'must be a number' }).optional(), data: one },
    { error: 'the body must be a JSON object or a form' })),
};
/** JSON or form, every value a string: `"code":123` is refused here, not hashed (RFC 6749 §5.2 invalid_request). */
const TOKEN = { body: PARAMS };

/**
 * The chat client API (docs/chat-bot.md: people talk to bots by username) and
 * the chat page's token exchange. A child context: bad input gets this
 * API's `{error, error_description}` JSON, not the Bot API envelope.
 */
export async function clientRoutes(app: FastifyInstance, gh: Gatehouse, client: ChatClient, files: BotFiles): Promise<void> {
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store');
  });
  await app.register(async (api) => {
    validateWithZod(api);
    // Malformed, oversized or mistyped input and every refusal: this API's own JSON, never the Bot API envelope.
    api.setErrorHandler(handlerFor(chatClientAnswer));
    routes(api, gh, client);
    fileRoute(api, gh, files);
  });
}

/** The chat client API's paths and the methods each serves; any other method is 405, not a Bot API call. */
const SERVED: [url: string, methods: string[]][] = [
  ['/client/chats', ['GET', 'HEAD']],
  ['/client/chats/:bot/messages', ['GET', 'HEAD', 'POST']],
  ['/client/chats/:bot/callback', ['POST']],
  ['/client/chats/:bot/commands', ['GET', 'HEAD']],
  ['/client/files/:file_id', ['GET', 'HEAD']],
  ['/client/token', ['POST']],
];
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

function routes(app: FastifyInstance, gh: Gatehouse, client: ChatClient): void {
  // RFC 9110 §15.5.6: 405 with Allow. Without these, `/client/token` with another verb would fall to `/:bot/:method`.
  for (const [url, methods] of SERVED) {
    const others = ALL_METHODS.filter((m) => !methods.includes(m));
    app.route({ method: others, url, handler: async (_req, reply) => reply.code(405).header('allow', methods.join(', ')).type('application/json')
      .send({ error: 'invalid_request', error_description: 'method not allowed' }) });
  }

  app.get('/client/chats', async (req, reply) => {
    const who = await chatUser(gh, req, reply);
    if (!who) return reply;
    try {
      return { chats: await client.chats(who) };
    } catch (e) {
      return sendClientError(reply, e);
    }
  });

  app.post('/client/chats/:bot/messages', { schema: SEND }, async (req, reply) => {
    const who = await chatUser(gh, req, reply);
    if (!who) return reply;
    const body = req.body as z.output<typeof SEND.body>;
    const text = body.text ?? (req.query as z.output<typeof SEND.querystring>).text;
    try {
      return { message: await client.send(who, (req.params as z.output<typeof BOT>).bot, text) };
    } catch (e) {
      return sendClientError(reply, e);
    }
  });

  app.get('/client/chats/:bot/messages', { schema: READ }, async (req, reply) => {
    const who = await chatUser(gh, req, reply);
    if (!who) return reply;
    const q = req.query as z.output<typeof READ.querystring>;
    const signal = clientGone(reply);
    try {
      const after = nonNegative(q.after, 'after', Number.MAX_SAFE_INTEGER);
      const timeout = nonNegative(q.timeout, 'timeout', 50);
      return { messages: await client.messages(who, (req.params as z.output<typeof BOT>).bot, after, timeout, signal) };
    } catch (e) {
      return sendClientError(reply, e);
    }
  });

  app.get('/client/chats/:bot/commands', { schema: { params: BOT } }, async (req, reply) => {
    const who = await chatUser(gh, req, reply);
    if (!who) return reply;
    try {
      return { commands: await client.commands(who, (req.params as z.output<typeof BOT>).bot) };
    } catch (e) {
      return sendClientError(reply, e);
    }
  });

  // A press waits up to 15 s for the bot's answer (src/core/bot/callbacks.ts).
  app.post('/client/chats/:bot/callback', { schema: PRESS }, async (req, reply) => {
    const who = await chatUser(gh, req, reply);
    if (!who) return reply;
    const body = req.body as z.output<typeof PRESS.body>;
    try {
      return await client.press(who, (req.params as z.output<typeof BOT>).bot, body.message_id, body.data, clientGone(reply));
    } catch (e) {
      return sendClientError(reply, e);
    }
  });

  /**
   * The chat page's code-for-token exchange, same-origin so the browser needs no
   * CORS on the authorization server. Only for the chat client, and only the
   * authorization_code (with PKCE) and refresh_token grants.
   */
  app.post('/client/token', { schema: TOKEN }, async (req, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    const body = req.body as Params;
    const grantType = body.grant_type;
    try {
      if (grantType !== 'authorization_code' && grantType !== 'refresh_token') throw unsupportedGrantType('the chat page uses authorization_code and refresh_token');
      const params: Params = { ...body, client_id: CHAT_PAGE_CLIENT_ID };
      return await gh.tokenEndpoint.handle({ params, authorization: undefined, address: req.ip });
    } catch (e) {
      return sendClientError(reply, e);
    }
  });
}

/** RFC 6266 §4.3: the name as a quoted ASCII fallback and as RFC 8187 UTF-8. */
function disposition(kind: 'inline' | 'attachment', name: string | null): string {
  if (!name) return kind;
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * `GET /client/files/<file_id>`: a photo or document a bot sent into one of
 * the person's chats. Anything else, another person's file included, is 404:
 * whether a file exists is not told. Documents are attachments, and nothing
 * served here runs as a page of this origin (sandbox, nosniff).
 */
function fileRoute(app: FastifyInstance, gh: Gatehouse, files: BotFiles): void {
  app.get('/client/files/:file_id', { schema: { params: z.object({ file_id: z.string() }) } }, async (req, reply) => {
    const who = await chatUser(gh, req, reply);
    if (!who) return reply;
    try {
      const found = await files.forPerson(who.userId, (req.params as { file_id: string }).file_id);
      if (!found) throw notFound('no such file in your chats');
      const { file, body } = found;
      return reply.type(file.mimeType ?? 'application/octet-stream').header('content-length', file.size)
        .header('content-disposition', disposition(file.kind === 'photo' ? 'inline' : 'attachment', file.fileName))
        .header('x-content-type-options', 'nosniff').header('content-security-policy', "sandbox; default-src 'none'")
        .send(body);
    } catch (e) {
      return sendClientError(reply, e);
    }
  });
}
