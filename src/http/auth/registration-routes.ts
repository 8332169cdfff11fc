import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { invalidClientMetadata } from '../../core/errors.js';
import { REGISTRATION_PATH, type Registered } from '../../core/oauth/registration.js';
import type { Gatehouse } from '../../gatehouse.js';
import { noStore } from '../common.js';
import { pathParams } from '../input.js';

/**
 * CORS as for bearer endpoints: the credential is a bearer token, never a
 * cookie, so a client running in a browser (an MCP client) may register itself.
 */
const REGISTRATION_CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST, PUT, DELETE',
  'access-control-allow-headers': 'Authorization, Content-Type',
  'access-control-expose-headers': 'WWW-Authenticate',
  'access-control-max-age': '600',
} as const;

const isJson = (req: FastifyRequest) => /^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '');

/**
 * RFC 7591 §3 `POST /oauth/register` and RFC 7592 `GET|PUT|DELETE
 * /oauth/register/<client_id>` (src/core/oauth/registration.ts). Served only
 * when `GATEHOUSE_REGISTRATION` is `token` or `open`. The metadata is a JSON
 * object, checked by the core's one schema (its errors are RFC 7591 §3.2.2's).
 */
export async function registrationRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  if (!gh.registration.enabled) return;
  const json = { kind: 'json' as const };
  const one = { config: json, schema: { params: pathParams('client_id') } };
  const send = (reply: FastifyReply, r: Registered) => reply.code(r.status).send(r.body);
  // §3: the body is JSON; anything else (a form) is metadata the server cannot read.
  const body = (req: FastifyRequest) => {
    if (!isJson(req)) throw invalidClientMetadata('the client metadata must be sent as a JSON object (Content-Type: application/json)');
    return req.body;
  };
  // Registered in a context of its own (app.ts): the hook runs for these routes only, error answers included.
  app.addHook('onRequest', async (_req, reply) => {
    reply.headers(REGISTRATION_CORS);
    noStore(reply);
  });

  app.post(REGISTRATION_PATH, { config: json }, async (req, reply) => send(reply, await gh.registration.register(body(req), req.headers.authorization, req.ip)));
  app.get<{ Params: { client_id: string } }>(`${REGISTRATION_PATH}/:client_id`, one, async (req, reply) =>
    send(reply, await gh.registration.read(req.params.client_id, req.headers.authorization, req.ip)));
  app.put<{ Params: { client_id: string } }>(`${REGISTRATION_PATH}/:client_id`, one, async (req, reply) =>
    send(reply, await gh.registration.update(req.params.client_id, body(req), req.headers.authorization, req.ip)));
  app.delete<{ Params: { client_id: string } }>(`${REGISTRATION_PATH}/:client_id`, one, async (req, reply) => {
    await gh.registration.remove(req.params.client_id, req.headers.authorization, req.ip);
    return reply.code(204).send();
  });
  for (const url of [REGISTRATION_PATH, `${REGISTRATION_PATH}/:client_id`]) app.options(url, { config: json }, async (_req, reply) => reply.code(204).send());
}
