import { GatehouseError, invalidRequest } from '../errors.js';
import { required, type Params } from '../params.js';
import { authenticateClient } from './client-auth.js';
import type { Grant, GrantDeps } from './grants/grant.js';
import { authorizationCodeGrant } from './grants/authorization-code.js';
import { clientCredentialsGrant } from './grants/client-credentials.js';
import { passwordGrant } from './grants/password.js';
import { refreshTokenGrant } from './grants/refresh-token.js';
import type { TokenResponse } from './tokens.js';
import { tokenRequestKey, type DpopRequest } from './dpop.js';

export interface TokenRequest {
  params: Params;
  authorization: string | undefined;
  address: string;
  /** `x5t#S256` of the TLS client certificate presented, if any (RFC 8705). */
  clientCertThumbprint?: string | undefined;
  /** The `DPoP` header with the method and URL it must name (RFC 9449 §5). */
  dpop?: DpopRequest | undefined;
}

/** Parameters of client authentication and dispatch, accepted by every grant. */
const COMMON = new Set(['grant_type', 'client_id', 'client_secret']);

/**
 * The token endpoint (RFC 6749 §3.2): authenticate the client, look the grant
 * up by `grant_type` in the registry, check the client may use it, dispatch.
 */
export class TokenEndpoint {
  private readonly grants = new Map<string, Grant>();

  constructor(private readonly deps: GrantDeps, grants: Grant[] = [authorizationCodeGrant, clientCredentialsGrant, passwordGrant, refreshTokenGrant]) {
    for (const g of grants) this.register(g);
  }

  /**
   * Adds an extension grant (RFC 6749 §4.5): its `grant_type` is an absolute
   * URI, and clients must list it in their grant types to use it.
   */
  register(grant: Grant): void {
    this.grants.set(grant.grantType, grant);
  }

  get grantTypes(): string[] {
    return [...this.grants.keys()];
  }

  async handle(req: TokenRequest): Promise<TokenResponse> {
    const grantType = required(req.params, 'grant_type');
    const { client } = await authenticateClient(this.deps.storage.clients, req, this.deps.clock.now(), this.deps.clientThrottle, this.deps.clientAssertions);
    const grant = this.grants.get(grantType);
    if (!grant) throw new GatehouseError('unsupported_grant_type', `grant_type ${grantType} is not supported`);
    if (!client.grantTypes.includes(grantType)) throw new GatehouseError('unauthorized_client', `client is not allowed the ${grantType} grant`);
    for (const name of Object.keys(req.params)) {
      if (!COMMON.has(name) && !grant.parameters.has(name) && Array.isArray(req.params[name])) {
        throw invalidRequest(`parameter ${name} is repeated`);
      }
    }
    // RFC 9449 §5: checked once the client and grant are known, so a refused request leaves no jti behind.
    const dpopJkt = await tokenRequestKey(this.deps.dpop, req.dpop, client);
    const cert = req.clientCertThumbprint;
    return grant.handle({ client, params: req.params, address: req.address, ...(dpopJkt ? { dpopJkt } : {}), ...(cert ? { clientCertThumbprint: cert } : {}) }, this.deps);
  }
}
