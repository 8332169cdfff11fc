import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BotApiError } from '../../core/bot/errors.js';
import { ClientError, type ChatClient } from '../../core/bot/people.js';
import type { Gatehouse } from '../../gatehouse.js';

export const CHAT_SCOPE = 'chat';

/** RFC 6750 §3 challenge and body. */
function bearerError(reply: FastifyReply, status: number, error: string | undefined, description: string): FastifyReply {
  const attrs = [`realm="gatehouse"`, ...(error ? [`error="${error}"`, `error_description="${description}"`] : []), `scope="${CHAT_SCOPE}"`];
  return reply.code(status).header('www-authenticate', `Bearer ${attrs.join(', ')}`).header('cache-control', 'no-store')
    .type('application/json').send({ error: error ?? 'invalid_token', error_description: description });
}

/** The signed-in user behind a bearer token with scope `chat` (RFC 6750 §2.1), or undefined after answering. */
async function chatUser(gh: Gatehouse, req: FastifyRequest, reply: FastifyReply): Promise<string | undefined> {
  const header = req.headers.authorization;
  const m = header ? /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim()) : null;
  if (!header) {
    bearerError(reply, 401, undefined, 'a bearer access token with scope chat is required');
    return undefined;
  }
  if (!m) {
    bearerError(reply, 400, 'invalid_request', 'malformed Authorization header');
    return undefined;
  }
  const info = await gh.inspector.inspect(m[1]!);
  if (!info || !info.active || info.kind !== 'access_token') {
    bearerError(reply, 401, 'invalid_token', 'the access token is not valid');
    return undefined;
  }
  if (!info.scope.includes(CHAT_SCOPE) || !info.userId) {
    bearerError(reply, 403, 'insufficient_scope', 'the token needs scope chat and a signed-in user');
    return undefined;
  }
  return info.userId;
}

function sendClientError(reply: FastifyReply, e: unknown): FastifyReply {
  if (e instanceof ClientError) return reply.code(e.status).type('application/json').send({ error: e.error, error_description: e.description });
  if (e instanceof BotApiError) return reply.code(e.code).type('application/json').send({ error: e.code === 404 ? 'not_found' : 'invalid_request', error_description: e.description });
  throw e;
}

const nonNegative = (v: unknown, name: string, max: number): number => {
  if (v === undefined || v === '') return 0;
  if (typeof v !== 'string' || !/^\d{1,15}$/.test(v)) throw new ClientError(400, 'invalid_request', `${name} must be a non-negative integer`);
  return Math.min(Number(v), max);
};

/** The chat client API of INTERFACE.md: people talk to bots by username. */
export async function clientRoutes(app: FastifyInstance, gh: Gatehouse, client: ChatClient): Promise<void> {
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store');
  });

  app.get('/client/chats', async (req, reply) => {
    const userId = await chatUser(gh, req, reply);
    if (!userId) return reply;
    try {
      return { chats: await client.chats(userId) };
    } catch (e) {
      return sendClientError(reply, e);
    }
  });

  app.post('/client/chats/:bot/messages', async (req, reply) => {
    const userId = await chatUser(gh, req, reply);
    if (!userId) return reply;
    const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
    const text = body.text ?? (req.query as Record<string, unknown>).text;
    try {
      return { message: await client.send(userId, (req.params as { bot: string }).bot, text) };
    } catch (e) {
      return sendClientError(reply, e);
    }
  });

  app.get('/client/chats/:bot/messages', async (req, reply) => {
    const userId = await chatUser(gh, req, reply);
    if (!userId) return reply;
    const q = req.query as Record<string, unknown>;
    const ac = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) ac.abort();
    });
    try {
      const after = nonNegative(q.after, 'after', Number.MAX_SAFE_INTEGER);
      const timeout = nonNegative(q.timeout, 'timeout', 50);
      return { messages: await client.messages(userId, (req.params as { bot: string }).bot, after, timeout, ac.signal) };
    } catch (e) {
      return sendClientError(reply, e);
    }
  });
}
