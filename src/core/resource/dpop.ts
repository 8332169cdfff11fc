import { GatehouseError, invalidToken } from '../errors.js';
import type { DpopVerifier } from '../oauth/dpop.js';
import type { BearerRequest, PresentedToken } from './bearer.js';
import type { VerifiedToken } from './token.js';

/**
 * RFC 9449 §7: a DPoP-bound token is good only with the DPoP scheme and a
 * valid proof, for this request and this token (`ath`), by the key it is
 * bound to; presented as a bearer token it is refused (§7.2), and an
 * unbound token is not accepted under the DPoP scheme.
 */
export async function checkDpopBinding(token: VerifiedToken, presented: PresentedToken, req: BearerRequest, verifier: DpopVerifier): Promise<void> {
  if (presented.scheme === 'Bearer') {
    if (token.dpopJkt !== undefined) throw invalidToken('the access token is DPoP-bound: send it as Authorization: DPoP with a DPoP proof');
    return;
  }
  if (token.dpopJkt === undefined) throw invalidToken('the access token is not DPoP-bound: send it as a Bearer token');
  if (req.url === undefined) throw new TypeError('a DPoP proof needs the request URL (BearerRequest.url)');
  await verifier.verify({ proof: req.dpop, method: req.method, url: req.url, accessToken: presented.token, jkt: token.dpopJkt });
}

const CHALLENGED = new Set(['invalid_request', 'invalid_token', 'insufficient_scope', 'invalid_dpop_proof', 'use_dpop_nonce']);

/**
 * The challenges of a resource that accepts DPoP (RFC 9449 §7.1): a `DPoP`
 * challenge naming the algorithms beside the Bearer one, the error on the
 * DPoP challenge when the request used that scheme or its proof failed (401),
 * and a fresh nonce with `use_dpop_nonce` (§9).
 */
export function withDpopChallenge(e: unknown, scheme: PresentedToken['scheme'] | undefined, algs: readonly string[], nonce: (() => string) | undefined): unknown {
  if (!(e instanceof GatehouseError) || !CHALLENGED.has(e.code)) return e;
  const proofError = e.code === 'invalid_dpop_proof' || e.code === 'use_dpop_nonce';
  const bearer = e.challenge?.scheme === 'Bearer' ? e.challenge : { scheme: 'Bearer' as const };
  const fresh = e.code === 'use_dpop_nonce' && nonce ? { nonce: nonce() } : {};
  return e.with({ ...(proofError ? { status: 401 } : {}), challenge: { ...bearer, dpop: { algs, primary: proofError || scheme === 'DPoP', ...fresh } } });
}
