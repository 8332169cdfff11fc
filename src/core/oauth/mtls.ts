import { createHash, X509Certificate } from 'node:crypto';
import { safeEqual } from '../crypto.js';

/**
 * Mutual-TLS client authentication and certificate-bound tokens (RFC 8705).
 * A certificate is known by its `x5t#S256` thumbprint: the base64url SHA-256
 * of its DER encoding (§3.1), which is also what a bound token carries.
 */

/** RFC 8705 §3.1 thumbprint of a DER certificate. */
export function thumbprintOfDer(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('base64url');
}

/** SHA-256 is 32 bytes: 43 base64url characters, no padding. */
const THUMBPRINT = /^[A-Za-z0-9_-]{43}$/;

export const isThumbprint = (value: string): boolean => THUMBPRINT.test(value);

/**
 * The thumbprint of a certificate given as PEM (or DER); undefined when it is
 * not a certificate at all. Parsing first means a key or garbage is refused
 * instead of producing a thumbprint nothing will ever match.
 */
export function certificateThumbprint(cert: string | Uint8Array): string | undefined {
  try {
    return thumbprintOfDer(new X509Certificate(cert).raw);
  } catch {
    return undefined;
  }
}

/**
 * A client certificate forwarded by a TLS-terminating proxy, in the forms
 * proxies send: RFC 9440 `Client-Cert` (a structured-field byte sequence
 * `:base64 DER:`), a URL-encoded PEM (nginx `$ssl_client_escaped_cert`,
 * Envoy/Traefik style), or a PEM whose line breaks became spaces.
 */
export function thumbprintFromHeader(value: string): string | undefined {
  const v = value.trim();
  if (!v || v.length > 16_384) return undefined;
  const sf = /^:([A-Za-z0-9+/]+=*):$/.exec(v);
  if (sf) return certificateThumbprint(Buffer.from(sf[1]!, 'base64'));
  let pem = v;
  if (pem.includes('%')) {
    try {
      pem = decodeURIComponent(pem);
    } catch {
      return undefined;
    }
  }
  const m = /-----BEGIN CERTIFICATE-----([\sA-Za-z0-9+/=]+)-----END CERTIFICATE-----/.exec(pem);
  if (!m) return undefined;
  return certificateThumbprint(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'));
}

/** Constant-time comparison of two thumbprints. */
export const thumbprintsMatch = (a: string | undefined, b: string | undefined): boolean =>
  typeof a === 'string' && typeof b === 'string' && safeEqual(a, b);

/**
 * RFC 8705 §3: tokens issued to a client that authenticates with its
 * certificate are bound to that certificate. It authenticated with exactly
 * the registered one, so the registered thumbprint is the binding.
 */
export function certificateBinding(client: { authMethod: string; tlsCertThumbprint?: string }): string | undefined {
  return client.authMethod === 'self_signed_tls_client_auth' ? client.tlsCertThumbprint : undefined;
}
