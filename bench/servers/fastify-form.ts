import formbody from '@fastify/formbody';
import Fastify from 'fastify';
import { exitWithParent } from './lifecycle.js';

/**
 * The token endpoint's shape without its work: Fastify with the form-body
 * parser Gatehouse uses, a POST route, and a token-sized JSON answer with the
 * RFC 6749 §5.1 no-store headers. Gatehouse's cost above this one is the
 * OAuth work itself (client authentication, signing) plus its plugins.
 */
const response = {
  access_token: 'x'.repeat(520),
  token_type: 'Bearer',
  expires_in: 3600,
  scope: 'user',
};
const app = Fastify({ logger: false });
await app.register(formbody);
app.post('/oauth/token', async (req, reply) => {
  if ((req.body as Record<string, unknown> | undefined)?.grant_type !== 'client_credentials') return reply.code(400).send({ error: 'invalid_request' });
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
  return response;
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url: address })}\n`);
exitWithParent();
