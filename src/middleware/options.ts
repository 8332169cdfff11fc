import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { OutboundError, type OutboundHttp } from '../core/outbound.js';
import { systemClock, type Clock } from '../core/ports.js';
import { createOutbound } from '../infra/outbound/client.js';
import { checkCertificateBinding } from '../core/resource/binding.js';
import { CachedVerifier, TokenRouter } from '../core/resource/cache.js';
import { extractAccessToken, type BearerRequest, type PresentedToken } from '../core/resource/bearer.js';
import { checkDpopBinding, withDpopChallenge } from '../core/resource/dpop.js';
import { DPOP_ALGORITHMS, DpopNonces, DpopVerifier, MemoryReplayStore } from '../core/oauth/dpop.js';
import type { ReplayStore } from '../core/oauth/client-assertion.js';
import { invalidToken } from '../core/resource/errors.js';
import { IntrospectionVerifier } from '../core/resource/introspection.js';
import { RemoteJwks } from '../core/resource/jwks.js';
import { JwtVerifier } from '../core/resource/jwt.js';
import { requireScope, scopeRule, type ScopeRule } from '../core/resource/scope.js';
import { requireAuthentication, type StepUpRule } from '../core/resource/step-up.js';
import { peerCertificateThumbprint } from './tls.js';
import { publishedMetadata, type PublishedMetadata, type ResourceMetadataOption } from './resource-metadata.js';
import type { AccessTokenVerifier, VerifiedToken } from '../core/resource/token.js';

/** What a protected route needs: `"a b"` or `["a", "b"]` (all of them), or `{ all, any }`. */
export type ScopeSpec = string | readonly string[] | ScopeRule;

export interface GatehouseAuthOptions {
  /** The authorization server's issuer identifier, e.g. `https://auth.example.com` (its {auth_url}). */
  issuer: string;
  /** This API's identifier(s), matched against `aud`. Gatehouse puts `GATEHOUSE_API_URL` there. */
  audience: string | readonly string[];
  /** Default `${issuer}/.well-known/jwks.json`. */
  jwksUri?: string;
  /** A subset of `ACCEPTED_ALGORITHMS` (src/core/jwt-verify.ts); default `['ES256']`, what Gatehouse signs with. */
  algorithms?: readonly string[];
  /** Allowed clock skew for `exp`/`nbf`, seconds (default 0). */
  clockToleranceSec?: number;
  /**
   * Check tokens by RFC 7662 introspection too: opaque tokens always, and
   * every token with `allTokens: true` (revocation is then seen within
   * `cacheTtlSec`). Needs a client created with `--introspect`.
   */
  introspection?: { clientId: string; clientSecret: string; endpoint?: string; cacheTtlSec?: number; allTokens?: boolean };
  /** The `realm` of the `WWW-Authenticate` challenge (default `gatehouse`). */
  realm?: string;
  /** Bring your own check instead (e.g. `TableVerifier` when sharing Gatehouse's storage). */
  verifier?: AccessTokenVerifier;
  /**
   * Your own fetch for the JWKS and introspection requests (a proxy, a test
   * double). Default: Gatehouse's outbound client (no redirects, time and
   * size limits; the issuer is yours, so private addresses are allowed).
   */
  fetch?: typeof fetch;
  clock?: Clock;
  /**
   * `x5t#S256` of the client certificate behind a request, for certificate-bound
   * tokens (RFC 8705 §3). Default: the certificate of the TLS connection itself;
   * behind a TLS-terminating proxy, read the one it forwards (from it only).
   */
  clientCertificate?: (req: IncomingMessage) => string | undefined;
  /**
   * Publish OAuth 2.0 Protected Resource Metadata (RFC 9728) for this API and
   * name it in every challenge (`resource_metadata`, §5.1), so a client that
   * knows only the API's URL finds the authorization server. Fastify: served
   * by the plugin; Node and Express: also mount `gatehouseResourceMetadata`.
   */
  resourceMetadata?: ResourceMetadataOption;
  /**
   * DPoP (RFC 9449 §7), always accepted: `Authorization: DPoP <token>` with a
   * `DPoP` proof; DPoP-bound tokens are refused as bearer tokens.
   */
  dpop?: DpopOptions;
  /**
   * Step-up (RFC 9470): the lowest authentication level a token's `acr` must
   * show (`urn:gatehouse:acr:password` < `urn:gatehouse:acr:mfa` <
   * `urn:gatehouse:acr:phishing-resistant`), and at most how many seconds ago
   * the person authenticated (`auth_time`). Below: 401
   * `insufficient_user_authentication` with `acr_values` / `max_age`, which
   * the client sends to the authorization endpoint to get a new token.
   */
  acr?: string;
  maxAge?: number;
}

export interface DpopOptions {
  /**
   * The absolute URL a client addressed (the proof's `htu`). Default: the
   * `Host` header, the connection's scheme and the path; behind a proxy,
   * give your public base URL here.
   */
  url?: (req: IncomingMessage) => string;
  /** Where proofs' `jti`s are kept (one store for every process of the API); default this process's memory. */
  replay?: ReplayStore;
  /** Demand server nonces (§9): `true` (this process's secret) or a secret shared by every process. */
  nonce?: boolean | { secret: Uint8Array };
  /** A ready verifier (Gatehouse's own API shares the authorization server's); the options above are then ignored. */
  verifier?: DpopVerifier;
}

/** The URL as the client sent it: Express keeps it in `originalUrl` once a router stripped its mount path. */
function defaultRequestUrl(req: IncomingMessage): string {
  const scheme = (req.socket as Partial<TLSSocket> | undefined)?.encrypted ? 'https' : 'http';
  return `${scheme}://${req.headers.host ?? 'localhost'}${(req as { originalUrl?: string }).originalUrl ?? req.url ?? '/'}`;
}

function dpopVerifier(o: DpopOptions | undefined, clock: Clock): DpopVerifier {
  if (o?.verifier) return o.verifier;
  const nonces = o?.nonce ? new DpopNonces(o.nonce === true ? {} : { secret: o.nonce.secret }) : undefined;
  return new DpopVerifier({ replay: o?.replay ?? new MemoryReplayStore(), clock, nonces });
}

/** A caller's own fetch in the shape of the outbound port: the same deadline, size cap and no redirects. */
function fetchAsOutbound(fetchFn: typeof fetch): OutboundHttp {
  return async (req) => {
    let res: Response;
    try {
      res = await fetchFn(req.url, { method: req.method ?? 'GET', headers: req.headers ?? {}, body: req.body ?? null, redirect: 'manual', signal: AbortSignal.timeout(req.timeoutMs) });
    } catch (e) {
      throw new OutboundError((e as Error).name === 'TimeoutError' ? 'timeout' : 'connection', (e as Error).message);
    }
    const maxBytes = req.maxBytes ?? 256 * 1024;
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of (res.body ?? []) as AsyncIterable<Uint8Array>) {
      chunks.push(chunk);
      size += chunk.length;
      if (size > maxBytes) break; // leaving the loop cancels the stream
    }
    const body = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
    return { status: res.status, headers: Object.fromEntries(res.headers), body, truncated: size > maxBytes };
  };
}

/** Verified JWTs are remembered this long (the signature check is the expensive part). */
const JWT_CACHE_MS = 60_000;

/** The verifier the options describe: local JWT checks, plus introspection where asked for. */
export function createVerifier(opts: GatehouseAuthOptions): AccessTokenVerifier {
  if (opts.verifier) return opts.verifier;
  const clock = opts.clock ?? systemClock;
  const issuer = opts.issuer.replace(/\/+$/, '');
  const audience = typeof opts.audience === 'string' ? [opts.audience] : [...opts.audience];
  const http = opts.fetch ? fetchAsOutbound(opts.fetch) : createOutbound({ allowPrivate: true }).request;
  const keys = new RemoteJwks({ uri: opts.jwksUri ?? `${issuer}/.well-known/jwks.json`, clock, http });
  const jwt = new CachedVerifier(new JwtVerifier({ keys, issuer, audience, clock, ...(opts.algorithms ? { algorithms: opts.algorithms } : {}), clockToleranceSec: opts.clockToleranceSec ?? 0 }), { ttlMs: JWT_CACHE_MS, clock, cacheFailures: false });
  const i = opts.introspection;
  if (!i) return new TokenRouter({ jwt, opaque: { verify: async () => { throw invalidToken('opaque tokens need introspection, which is not configured'); } } });
  const introspection = new CachedVerifier(new IntrospectionVerifier({
    endpoint: i.endpoint ?? `${issuer}/oauth/check_token`, clientId: i.clientId, clientSecret: i.clientSecret, issuer, audience, clock, http,
  }), { ttlMs: (i.cacheTtlSec ?? 5) * 1000, clock });
  return i.allTokens ? introspection : new TokenRouter({ jwt, opaque: introspection });
}

/** One protected-resource check, whatever the framework: find the token, verify it, check the scope. */
export class BearerGuard {
  readonly realm: string;
  readonly verifier: AccessTokenVerifier;
  readonly clientCertificate: (req: IncomingMessage) => string | undefined;
  /** RFC 9728 metadata to publish, when the options ask for it. */
  readonly resourceMetadata: PublishedMetadata | undefined;
  /** The URL a request was sent to, for DPoP proofs' `htu`. */
  readonly requestUrl: (req: IncomingMessage) => string;
  private readonly dpop: DpopVerifier;
  private readonly clock: Clock;
  private readonly stepUp: StepUpRule;

  constructor(opts: GatehouseAuthOptions) {
    this.realm = opts.realm ?? 'gatehouse';
    this.resourceMetadata = opts.resourceMetadata ? publishedMetadata(opts.issuer, opts.audience, opts.resourceMetadata) : undefined;
    this.clientCertificate = opts.clientCertificate ?? peerCertificateThumbprint;
    this.verifier = createVerifier(opts);
    this.clock = opts.clock ?? systemClock;
    this.requestUrl = opts.dpop?.url ?? defaultRequestUrl;
    this.dpop = dpopVerifier(opts.dpop, this.clock);
    this.stepUp = { ...(opts.acr !== undefined ? { acr: opts.acr } : {}), ...(opts.maxAge !== undefined ? { maxAge: opts.maxAge } : {}) };
  }

  /** `stepUp`: a route's own level and age, in place of the options' (RFC 9470). */
  async authenticate(req: BearerRequest, scope?: ScopeSpec, stepUp: StepUpRule = this.stepUp): Promise<VerifiedToken> {
    let presented: PresentedToken | undefined;
    try {
      presented = extractAccessToken(req);
      const token = await this.verifier.verify(presented.token);
      checkCertificateBinding(token, req.clientCertThumbprint);
      await checkDpopBinding(token, presented, req, this.dpop);
      requireScope(token.scope, scopeRule(scope));
      requireAuthentication(token, stepUp, this.clock.now());
      return token;
    } catch (e) {
      const nonces = this.dpop.nonces;
      throw withDpopChallenge(e, presented?.scheme, DPOP_ALGORITHMS, nonces && (() => nonces.current(this.clock.now())));
    }
  }
}
