import type { Client } from '../../model.js';
import type { ClientAssertions } from '../client-assertion.js';
import type { Clock, Storage } from '../../ports.js';
import type { Params } from '../../params.js';
import type { LoginGuard } from '../../login.js';
import type { CredentialThrottle } from '../../throttle.js';
import type { OAuthConfig } from '../config.js';
import type { TokenIssuer, TokenResponse } from '../tokens.js';
import type { IdTokenIssuer } from '../../oidc/id-token.js';
import type { DpopVerifier } from '../dpop.js';

/** What every grant may use; each grant takes only what it needs. */
export interface GrantDeps {
  storage: Storage;
  config: OAuthConfig;
  clock: Clock;
  tokenIssuer: TokenIssuer;
  login: LoginGuard;
  /** Wrong client secrets, per client_id and per address (src/core/oauth/client-auth.ts). */
  clientThrottle: CredentialThrottle;
  /** OpenID Connect ID tokens for the code and refresh grants (src/core/oidc/id-token.ts). */
  idTokens?: IdTokenIssuer;
  /** `private_key_jwt` client authentication (src/core/oauth/client-assertion.ts). */
  clientAssertions?: ClientAssertions;
  /** DPoP proofs (RFC 9449, src/core/oauth/dpop.ts). */
  dpop?: DpopVerifier;
}

export interface GrantRequest {
  client: Client;
  params: Params;
  /** Remote address, for rate limits. */
  address: string;
  /** RFC 9449 §5: thumbprint of the key of a valid DPoP proof sent with the request; tokens are bound to it. */
  dpopJkt?: string;
  /** RFC 8705 §3: `x5t#S256` of the TLS client certificate the request came with, if any. */
  clientCertThumbprint?: string;
}

/**
 * A grant type served by the token endpoint (RFC 6749 §4, extension grants
 * §4.5): its `grant_type` value, the parameters it accepts, and its handler.
 * Register more with `TokenEndpoint.register`.
 */
export interface Grant {
  grantType: string;
  parameters: ReadonlySet<string>;
  handle(req: GrantRequest, deps: GrantDeps): Promise<TokenResponse>;
}

/** A client may refresh only when registered for the refresh_token grant. */
export const mayRefresh = (client: Client) => client.grantTypes.includes('refresh_token');
