import type { FastifyInstance } from 'fastify';
import { authenticateClient } from '../../core/oauth/client-auth.js';
import { CIBA_PATH } from '../../core/oauth/ciba.js';
import type { Gatehouse } from '../../gatehouse.js';
import { formParams, noStore } from '../common.js';
import { PARAMS, formBody } from '../input.js';
import { clientCertificateReader } from '../tls.js';

/** OpenID Connect CIBA Core §7: the backchannel authentication endpoint (JSON answers, RFC 6749 §5.2 errors). */
export async function cibaRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const clientCert = clientCertificateReader(gh.config);
  app.post(CIBA_PATH, { config: { kind: 'json' as const }, schema: { body: formBody(PARAMS) } }, async (req, reply) => {
    noStore(reply);
    const params = formParams(req);
    const { client } = await authenticateClient(gh.storage.clients, {
      params, authorization: req.headers.authorization, address: req.ip, clientCertThumbprint: clientCert(req.raw),
    }, gh.clock.now(), gh.clientThrottle, gh.clientAssertions);
    return gh.ciba.authorize(client, params);
  });
}
