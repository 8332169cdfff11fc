/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728): what a client that knows
 * only a resource's URL needs to find the authorization server that issues
 * tokens for it (the path the Model Context Protocol's authorization flow
 * takes), and the `resource_metadata` attribute that points there from every
 * `WWW-Authenticate` challenge (§5.1).
 */

export type BearerMethod = 'header' | 'body' | 'query';

export interface ResourceMetadataOptions {
  /** The resource identifier (§2 `resource`): the URL the tokens' `aud` names. */
  resource: string;
  /** Issuer identifiers of the authorization servers (§2 `authorization_servers`). */
  authorizationServers: readonly string[];
  scopesSupported?: readonly string[] | undefined;
  /** RFC 6750 §2 methods the resource accepts; default all three. */
  bearerMethodsSupported?: readonly BearerMethod[] | undefined;
  resourceName?: string | undefined;
  resourceDocumentation?: string | undefined;
  /** RFC 8705 §3: certificate-bound tokens are checked (§2 `tls_client_certificate_bound_access_tokens`). */
  tlsClientCertificateBoundAccessTokens?: boolean | undefined;
  /** RFC 9728 §2 `dpop_signing_alg_values_supported` (RFC 9449 proofs the resource accepts). */
  dpopSigningAlgValuesSupported?: readonly string[] | undefined;
  /** RFC 9728 §2 `dpop_bound_access_tokens_required`: whether only DPoP-bound tokens are accepted. */
  dpopBoundAccessTokensRequired?: boolean | undefined;
}

export const RESOURCE_METADATA_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/**
 * RFC 9728 §3.1: the well-known segment goes between the host and the path
 * of the resource identifier (`https://api.example/v1` →
 * `https://api.example/.well-known/oauth-protected-resource/v1`); query and
 * fragment are not part of it.
 */
export function resourceMetadataUrl(resource: string): URL {
  const u = new URL(resource);
  const path = u.pathname === '/' ? '' : u.pathname.replace(/\/+$/, '');
  return new URL(`${u.origin}${RESOURCE_METADATA_WELL_KNOWN}${path}`);
}

/** The §2 document; §3.3: `resource` is exactly the identifier the metadata URL was built from. */
export function protectedResourceMetadata(o: ResourceMetadataOptions): Record<string, unknown> {
  return {
    resource: o.resource,
    authorization_servers: [...o.authorizationServers],
    bearer_methods_supported: [...(o.bearerMethodsSupported ?? ['header', 'body', 'query'])],
    ...(o.scopesSupported?.length ? { scopes_supported: [...o.scopesSupported] } : {}),
    ...(o.resourceName ? { resource_name: o.resourceName } : {}),
    ...(o.resourceDocumentation ? { resource_documentation: o.resourceDocumentation } : {}),
    ...(o.tlsClientCertificateBoundAccessTokens ? { tls_client_certificate_bound_access_tokens: true } : {}),
    ...(o.dpopSigningAlgValuesSupported?.length ? { dpop_signing_alg_values_supported: [...o.dpopSigningAlgValuesSupported] } : {}),
    ...(o.dpopBoundAccessTokensRequired !== undefined ? { dpop_bound_access_tokens_required: o.dpopBoundAccessTokensRequired } : {}),
  };
}

/**
 * Adds `resource_metadata="<url>"` (RFC 9728 §5.1) to each `Bearer`
 * challenge of a `WWW-Authenticate` value that lacks it. The URL is ours and
 * a valid quoted-string (no `"` or `\`), so it needs no escaping.
 */
export function withResourceMetadata(header: string, metadataUrl: string): string {
  if (/\bresource_metadata=/i.test(header)) return header;
  // Challenges begin with a scheme token after the start or a comma (RFC 9110 §11.6.1); only Bearer ones get the attribute.
  return header.replace(/(^|,\s*)(Bearer)(\s+[^,]*(?:,\s*[A-Za-z_]+=(?:"[^"]*"|[^,\s]*))*)?/gi, (_m, lead: string, scheme: string, params: string | undefined) =>
    `${lead}${scheme}${params ? `${params}, ` : ' '}resource_metadata="${metadataUrl}"`);
}
