import type { ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { DPOP_ALGORITHMS } from '../core/oauth/dpop.js';
import {
  protectedResourceMetadata, resourceMetadataUrl, withResourceMetadata, type BearerMethod, type ResourceMetadataOptions,
} from '../core/oauth/resource-metadata.js';

/**
 * `resourceMetadata` of the middleware's options: publish RFC 9728 metadata
 * for your API and point every challenge at it. `true` takes everything from
 * the other options (the first `audience` is the resource identifier).
 */
export type ResourceMetadataOption = true | {
  /** Default: the first `audience`. */
  resource?: string;
  scopesSupported?: readonly string[];
  bearerMethodsSupported?: readonly BearerMethod[];
  resourceName?: string;
  resourceDocumentation?: string;
};

export interface PublishedMetadata {
  /** Where the document is served (RFC 9728 §3.1), the value of `resource_metadata`. */
  url: string;
  /** The path of `url` on this server. */
  path: string;
  document: Record<string, unknown>;
}

/** The document and its address, from the middleware options. */
export function publishedMetadata(issuer: string, audience: string | readonly string[], option: ResourceMetadataOption, extra: Partial<ResourceMetadataOptions> = {}): PublishedMetadata {
  const o = option === true ? {} : option;
  const resource = o.resource ?? (typeof audience === 'string' ? audience : audience[0]);
  if (!resource) throw new TypeError('resourceMetadata needs a resource identifier (or an audience)');
  const url = resourceMetadataUrl(resource);
  const document = protectedResourceMetadata({
    resource, authorizationServers: [issuer.replace(/\/+$/, '')],
    scopesSupported: o.scopesSupported, bearerMethodsSupported: o.bearerMethodsSupported, resourceName: o.resourceName, resourceDocumentation: o.resourceDocumentation,
    // The middleware checks DPoP proofs (RFC 9449 §7) and takes bearer tokens too.
    dpopSigningAlgValuesSupported: DPOP_ALGORITHMS, dpopBoundAccessTokensRequired: false,
    ...extra,
  });
  return { url: url.href, path: url.pathname, document };
}

/**
 * Fastify: serves the document at `path` (public, cacheable for a minute) and adds
 * `resource_metadata` to every `WWW-Authenticate` Bearer challenge answered
 * in this context (RFC 9728 §5.1), whoever raised it.
 */
export function publishResourceMetadata(app: FastifyInstance, path: string, published: () => PublishedMetadata): void {
  app.get(path, { config: { auth: false } }, async (_req, reply) => {
    reply.header('cache-control', 'public, max-age=60');
    return published().document;
  });
  app.addHook('onSend', async (_req, reply, payload) => {
    const challenge = reply.getHeader('www-authenticate');
    if (typeof challenge === 'string') reply.header('www-authenticate', withResourceMetadata(challenge, published().url));
    return payload;
  });
}

/**
 * Plain Node and Express: answers GET on the document's path, and passes
 * every other request on. Use it with `gatehouseMiddleware` given the same
 * options, whose challenges then carry `resource_metadata`:
 *
 *   app.use(gatehouseResourceMetadata(opts));
 */
export function gatehouseResourceMetadata(opts: { issuer: string; audience: string | readonly string[]; resourceMetadata?: ResourceMetadataOption | undefined }) {
  const published = publishedMetadata(opts.issuer, opts.audience, opts.resourceMetadata ?? true);
  return (req: { method?: string | undefined; url?: string | undefined }, res: ServerResponse, next: (err?: unknown) => void): void => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== published.path || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'public, max-age=60' }).end(req.method === 'HEAD' ? undefined : JSON.stringify(published.document));
  };
}
