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

/** RFC 8705 §3.1 `cnf` claim (or introspection member): the certificate thumbprint, when there is one. */
export function certBinding(cnf: unknown): { certThumbprint?: string } {
  const x5t = cnf && typeof cnf === 'object' ? (cnf as Record<string, unknown>)['x5t#S256'] : undefined;
  return typeof x5t === 'string' ? { certThumbprint: x5t } : {};
}
