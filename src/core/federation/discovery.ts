import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { providerFailed } from './errors.js';
import { callProvider } from './fetch.js';
import type { Provider } from './providers.js';

/** Where a provider's endpoints are, found once per provider. */
export interface Endpoints {
  authorization: string;
  token: string;
  userinfo: string | undefined;
  /** `oidc`: the keys that sign ID tokens. */
  jwksUri: string | undefined;
  /** The `iss` authorization responses carry, when one is expected (RFC 9207). */
  issuer: string | undefined;
  /** RFC 9207 §3: the provider says it always sends `iss`, so a response without it is refused. */
  issRequired: boolean;
}

const TTL_MS = 3600_000;
/** A failed discovery is tried again after this long, not on every sign-in click. */
const RETRY_MS = 10_000;

const url = (v: unknown): string | undefined => {
  if (typeof v !== 'string') return undefined;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:' ? v : undefined;
  } catch {
    return undefined;
  }
};

/**
 * OpenID Connect Discovery 1.0 for `oidc` providers (fixed endpoints for the
 * others). The document's `issuer` must be exactly the configured one (§4.3),
 * or an attacker's document could redirect codes elsewhere.
 */
export class EndpointResolver {
  private readonly cache = new Map<string, { endpoints?: Endpoints; until: number }>();

  constructor(private readonly deps: { http: OutboundHttp; clock: Clock }) {}

  async resolve(p: Provider): Promise<Endpoints> {
    if (p.type !== 'oidc') {
      return {
        authorization: p.authorizationEndpoint!, token: p.tokenEndpoint!, userinfo: p.userinfoEndpoint, jwksUri: undefined,
        issuer: p.issuer, issRequired: false,
      };
    }
    const now = this.deps.clock.now();
    const hit = this.cache.get(p.id);
    if (hit && hit.until > now) {
      if (hit.endpoints) return hit.endpoints;
      throw providerFailed('the sign-in provider\'s configuration could not be loaded');
    }
    try {
      const endpoints = await this.discover(p);
      this.cache.set(p.id, { endpoints, until: now + TTL_MS });
      return endpoints;
    } catch (e) {
      this.cache.set(p.id, { until: now + RETRY_MS });
      throw e;
    }
  }

  private async discover(p: Provider): Promise<Endpoints> {
    const issuer = p.issuer!;
    const { status, body } = await callProvider(this.deps.http, `${issuer}/.well-known/openid-configuration`, { headers: { accept: 'application/json' } }, 'discovery');
    if (status !== 200) throw providerFailed(`the sign-in provider's configuration could not be loaded (HTTP ${status})`);
    if (body.issuer !== issuer) throw providerFailed('the sign-in provider\'s configuration names another issuer');
    const authorization = url(body.authorization_endpoint);
    const token = url(body.token_endpoint);
    const jwksUri = url(body.jwks_uri);
    if (!authorization || !token || !jwksUri) throw providerFailed('the sign-in provider\'s configuration lacks an endpoint');
    return {
      authorization, token, userinfo: url(body.userinfo_endpoint), jwksUri, issuer,
      issRequired: body.authorization_response_iss_parameter_supported === true,
    };
  }
}
