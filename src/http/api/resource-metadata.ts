import type { FastifyInstance } from 'fastify';
import { protectedResourceMetadata, RESOURCE_METADATA_WELL_KNOWN } from '../../core/oauth/resource-metadata.js';
import { PROFILE_SCOPES } from '../../core/resource/profile.js';
import { DPOP_ALGORITHMS } from '../../core/oauth/dpop.js';
import type { Gatehouse } from '../../gatehouse.js';
import { publishResourceMetadata, type PublishedMetadata } from '../../middleware/resource-metadata.js';

/**
 * RFC 9728 metadata of {api_url}, at `{api_url}/.well-known/oauth-protected-resource`
 * (the §3.1 address when, as by default, the API URL has no path), and
 * `resource_metadata` in every challenge it answers. Built on use: the API's
 * URL is known only once it listens (port 0).
 */
export function apiResourceMetadata(app: FastifyInstance, gh: Gatehouse): void {
  let cached: { resource: string; issuer: string; published: PublishedMetadata } | undefined;
  const published = (): PublishedMetadata => {
    const resource = gh.oauth.audience;
    const issuer = gh.oauth.issuer;
    if (cached?.resource !== resource || cached.issuer !== issuer) {
      const document = protectedResourceMetadata({
        resource, authorizationServers: [issuer], scopesSupported: PROFILE_SCOPES, resourceName: 'Gatehouse API',
        // Certificate-bound tokens are checked (RFC 8705 §3).
        tlsClientCertificateBoundAccessTokens: true,
        // RFC 9449 §7: DPoP proofs are checked; bearer tokens stay accepted.
        dpopSigningAlgValuesSupported: DPOP_ALGORITHMS, dpopBoundAccessTokensRequired: false,
      });
      cached = { resource, issuer, published: { url: `${resource.replace(/\/+$/, '')}${RESOURCE_METADATA_WELL_KNOWN}`, path: RESOURCE_METADATA_WELL_KNOWN, document } };
    }
    return cached.published;
  };
  publishResourceMetadata(app, RESOURCE_METADATA_WELL_KNOWN, published);
}
