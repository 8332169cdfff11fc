import { invalidRequest } from './errors.js';
import type { ClientAuthMethod } from './model.js';
import { parseAllowList } from './oauth/addresses.js';
import { certificateThumbprint, isThumbprint } from './oauth/mtls.js';

/** The application-level access settings of a registration (docs/oauth.md, Application-level access). */
export interface AccessInput {
  /** RFC 8705 self_signed_tls_client_auth: the client's certificate, PEM. */
  tlsClientCertificate?: string;
  /** … or its `x5t#S256` thumbprint (base64url SHA-256 of the DER certificate). */
  tlsClientCertificateThumbprint?: string;
  /** CIDR blocks or single addresses the client may call the token endpoint from. */
  allowedAddresses?: string[];
}

/** A certificate given means certificate authentication, unless a method is named. */
export const hasTlsCertificate = (input: AccessInput): boolean =>
  Boolean(input.tlsClientCertificate?.trim() || input.tlsClientCertificateThumbprint?.trim());

/**
 * Validates the access settings against the chosen authentication method and
 * returns the client fields they become. A certificate that does not parse,
 * a thumbprint of the wrong shape or a malformed address block is refused here,
 * at registration, never discovered at the token endpoint.
 */
export function clientAccess(input: AccessInput, authMethod: ClientAuthMethod): { tlsCertThumbprint?: string; allowedAddresses?: string[] } {
  const out: { tlsCertThumbprint?: string; allowedAddresses?: string[] } = {};
  const pem = input.tlsClientCertificate?.trim();
  const given = input.tlsClientCertificateThumbprint?.trim();
  if (authMethod === 'self_signed_tls_client_auth') {
    if (pem && given) throw invalidRequest('give the TLS client certificate or its thumbprint, not both');
    if (pem) {
      const thumbprint = certificateThumbprint(pem);
      if (!thumbprint) throw invalidRequest('the TLS client certificate is not a PEM X.509 certificate');
      out.tlsCertThumbprint = thumbprint;
    } else if (given) {
      if (!isThumbprint(given)) throw invalidRequest('the TLS client certificate thumbprint must be the base64url SHA-256 of the certificate (x5t#S256, 43 characters)');
      out.tlsCertThumbprint = given;
    } else {
      throw invalidRequest('self_signed_tls_client_auth needs the client\'s TLS certificate (or its x5t#S256 thumbprint)');
    }
  } else if (pem || given) {
    throw invalidRequest('a TLS client certificate goes with the auth method self_signed_tls_client_auth');
  }
  if (input.allowedAddresses?.length) {
    try {
      const list = parseAllowList(input.allowedAddresses);
      if (list.length) out.allowedAddresses = list;
    } catch (e) {
      throw invalidRequest(`allowed addresses: ${(e as Error).message}`);
    }
  }
  return out;
}
