import { thumbprintsMatch } from '../oauth/mtls.js';
import { invalidToken } from './errors.js';
import type { VerifiedToken } from './token.js';

/**
 * RFC 8705 §3: a certificate-bound access token is good only over a
 * connection on which the client presented that same certificate; anything
 * else (no certificate, another one) is `invalid_token` (§3, 401).
 */
export function checkCertificateBinding(token: VerifiedToken, presentedThumbprint: string | undefined): void {
  if (token.certThumbprint === undefined) return;
  if (!presentedThumbprint) throw invalidToken('the access token is bound to a TLS client certificate, and none was presented');
  if (!thumbprintsMatch(token.certThumbprint, presentedThumbprint)) throw invalidToken('the access token is bound to another TLS client certificate');
}

/**
 * The `cnf` claim (or introspection member): the certificate thumbprint
 * (RFC 8705 §3.1) and the DPoP key thumbprint (RFC 9449 §6), when there are.
 */
export function certBinding(cnf: unknown): { certThumbprint?: string; dpopJkt?: string } {
  const c = cnf && typeof cnf === 'object' ? (cnf as Record<string, unknown>) : {};
  const x5t = c['x5t#S256'];
  return { ...(typeof x5t === 'string' ? { certThumbprint: x5t } : {}), ...(typeof c.jkt === 'string' ? { dpopJkt: c.jkt } : {}) };
}
