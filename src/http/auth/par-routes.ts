import type { FastifyInstance, FastifyReply } from 'fastify';
import { authenticateClient } from '../../core/oauth/client-auth.js';
import { PAR_PATH, type PushedRequest } from '../../core/oauth/par.js';
import type { Params } from '../../core/params.js';
import type { Gatehouse } from '../../gatehouse.js';
import { formParams, noStore, sendErrorPage } from '../common.js';
import { PARAMS, formBody } from '../input.js';
import { clientCertificateReader } from '../tls.js';
import { pushedRequestKey } from '../../core/oauth/dpop.js';

/**
 * RFC 9126 §2: `POST /oauth/par`. The client authenticates exactly as at the
 * token endpoint (same methods, same throttle); the answer is 201 with the
 * `request_uri` and its lifetime, or an RFC 6749 §5.2 error.
 */
export async function parRoutes(app: FastifyInstance, gh: Gatehouse): Promise<void> {
  const clientCert = clientCertificateReader(gh.config);
  app.post(PAR_PATH, { config: { kind: 'json' as const }, schema: { body: formBody(PARAMS) } }, async (req, reply) => {
    noStore(reply);
    const params = formParams(req);
    const { client } = await authenticateClient(gh.storage.clients, {
      params, authorization: req.headers.authorization, address: req.ip, clientCertThumbprint: clientCert(req.raw),
    }, gh.clock.now(), gh.clientThrottle, gh.clientAssertions);
    // RFC 9449 §10.1: a DPoP proof here binds the code to its key.
    const bound = await pushedRequestKey(gh.dpop, { proof: req.headers.dpop, method: req.method, url: `${gh.oauth.issuer}${PAR_PATH}` }, params);
    return reply.code(201).send(await gh.par.push(client, bound));
  });
}

/** A refusal at the authorization endpoint: a page for the person, never a redirect (the request was not verified). */
function refuse(reply: FastifyReply, e: unknown): undefined {
  const err = e as { status?: number; description?: string; error?: string };
  if (err?.status !== 400 || typeof err.error !== 'string') throw e;
  sendErrorPage(reply, 400, 'This sign-in link is not valid', err.description ?? err.error);
  return undefined;
}

/** The authorization request behind `params` (the pushed one for a `request_uri`); undefined when the person was answered. */
export async function pushedRequest(gh: Gatehouse, reply: FastifyReply, params: Params): Promise<PushedRequest | undefined> {
  try {
    return await gh.par.expand(params);
  } catch (e) {
    return refuse(reply, e);
  }
}

/** Consumes a pushed request as its response is given; false when it was already used (the person was answered). */
export async function consumePushed(gh: Gatehouse, reply: FastifyReply, pushed: PushedRequest): Promise<boolean> {
  try {
    await gh.par.consume(pushed);
    return true;
  } catch (e) {
    refuse(reply, e);
    return false;
  }
}
