/** Records the core reads and writes. Times are Unix milliseconds. */

export type GrantType = 'authorization_code' | 'implicit' | 'password' | 'client_credentials' | 'refresh_token' | (string & {});
export type ClientAuthMethod = 'client_secret_basic' | 'client_secret_post' | 'none' | 'self_signed_tls_client_auth' | 'private_key_jwt' | 'client_secret_jwt';
export type TokenFormat = 'jwt' | 'opaque';

export const GRANT_TYPES: readonly string[] = [
  'authorization_code',
  'implicit',
  'password',
  'client_credentials',
  'refresh_token',
];

export interface Client {
  id: string;
  name: string;
  /** SHA-256 of the secret; null for public clients. */
  secretHash: string | null;
  /** During rotation the previous secret stays valid until this time. */
  previousSecretHash: string | null;
  previousSecretExpiresAt: number | null;
  redirectUris: string[];
  grantTypes: GrantType[];
  scope: string[];
  authMethod: ClientAuthMethod;
  /** First-party app: consent is skipped. */
  trusted: boolean;
  /** May call the introspection endpoint (a resource server). */
  introspect: boolean;
  /** Bound site: every redirect URI must sit under it (docs/security.md, Client bound to a site). */
  domain: string | null;
  tokenFormat: TokenFormat;
  /** RFC 8705 self_signed_tls_client_auth: `x5t#S256` of the registered certificate. */
  tlsCertThumbprint?: string;
  /** Addresses (CIDR blocks) the client may call from; absent or empty: anywhere (docs/oauth.md, Application-level access). */
  allowedAddresses?: string[];
  /** OpenID Connect RP-initiated logout: where the end-session endpoint may send the browser back (exact match). */
  postLogoutRedirectUris: string[];
  /** OpenID Connect Back-Channel Logout 1.0: where logout tokens are POSTed; null when the client takes none. */
  backchannelLogoutUri: string | null;
  /** OpenID Connect Registration §2 `id_token_signed_response_alg`; absent: ES256. */
  idTokenAlg?: IdTokenAlg;
  /** RFC 9126 §6 `require_pushed_authorization_requests`. */
  requirePar?: boolean;
  /** RFC 7591 §2 `jwks` (a JSON JWK Set) or `jwks_uri`: the keys of a `private_key_jwt` client (RFC 7523 §2.2). */
  jwks?: string;
  jwksUri?: string;
  /** `client_secret_jwt` (OpenID Connect Core §9): the secret itself, which keys the HMAC; stored sealed, never shown again. */
  jwtSecret?: string;
  /** RFC 8707: resources (URIs) it may ask tokens for beside the built-in API (src/core/oauth/resource-indicators.ts). */
  resources?: string[];
  /** OpenID Connect CIBA Core §4 `backchannel_token_delivery_mode` (src/core/oauth/ciba-options.ts). */
  backchannelTokenDeliveryMode?: 'poll' | 'ping';
  /** CIBA Core §4 `backchannel_client_notification_endpoint`: where ping mode POSTs. */
  backchannelNotificationEndpoint?: string;
  /** RFC 9449 §5.2 `dpop_bound_access_tokens`: every token request must carry a DPoP proof. */
  dpopBoundAccessTokens?: boolean;
  /** RFC 8693: the operator lets this public client use token exchange (`--public-token-exchange`); else confidential clients only. */
  publicTokenExchange?: boolean;
  createdAt: number;
}

/** JWS algorithms Gatehouse signs ID tokens with (OpenID Connect Discovery §3 requires RS256). */
export type IdTokenAlg = 'ES256' | 'RS256';

export const isPublic = (c: Client) => c.authMethod === 'none';

export interface User {
  id: string;
  username: string;
  email: string;
  name: string | null;
  passwordHash: string;
  createdAt: number;
  /**
   * True only once a link sent to `email` was followed (src/core/account/verify-email.ts) or an
   * administrator said so; released beside `email` as `email_verified`. Absent: false.
   */
  emailVerified?: boolean;
  /** When the account was locked (src/core/account-lock.ts); null or absent while it may sign in. */
  lockedAt?: number | null;
  /**
   * The time of the account's latest lock, kept by an unlock: access tokens
   * issued before it are refused for good, self-contained ones too
   * (`accountUsable`, src/core/account-lock.ts). Null or absent: never locked.
   */
  tokensValidAfter?: number | null;
}

export interface AuthorizationCode {
  codeHash: string;
  clientId: string;
  userId: string;
  /** The redirect_uri parameter as sent (null when the request omitted it: RFC 6749 §4.1.3). */
  redirectUri: string | null;
  scope: string[];
  codeChallenge: string | null;
  codeChallengeMethod: 'S256' | null;
  nonce: string | null;
  /** RFC 8707 §2.1: the resources the authorization request named; they apply to the whole grant. */
  resources?: string[];
  /** RFC 9449 §10 `dpop_jkt`: the code may be redeemed only with a DPoP proof by this key. */
  dpopJkt?: string;
  familyId: string;
  authTime: number;
  createdAt: number;
  expiresAt: number;
  consumedAt: number | null;
}

/** Every token descended from one grant (a code, a password grant): revoked together. */
export interface TokenFamily {
  id: string;
  clientId: string;
  userId: string | null;
  scope: string[];
  createdAt: number;
  revokedAt: number | null;
}

export interface RefreshToken {
  tokenHash: string;
  familyId: string;
  clientId: string;
  userId: string | null;
  scope: string[];
  createdAt: number;
  expiresAt: number;
  rotatedAt: number | null;
  revokedAt: number | null;
  /** RFC 8707 §2.2: the resources of the original grant, which a refresh may narrow but not widen. */
  resources?: string[];
  /** RFC 9449 §5: a public client's refresh token is bound to its DPoP key (thumbprint). */
  dpopJkt?: string;
}

/** Opaque access tokens are stored (by hash); JWT ones are not. */
export interface OpaqueAccessToken {
  tokenHash: string;
  jti: string;
  familyId: string | null;
  clientId: string;
  userId: string | null;
  scope: string[];
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** RFC 8705 §3: `x5t#S256` of the client certificate the token is bound to. */
  certThumbprint?: string;
  /** RFC 8707: the `aud` the token was issued for (absent: the built-in API). */
  audience?: string[];
  /** RFC 8693 §4.1: the `act` claim of an exchanged token (delegation), as JSON. */
  act?: Record<string, unknown>;
  /** RFC 9449 §6: thumbprint of the DPoP key the token is bound to (`cnf.jkt`). */
  dpopJkt?: string;
}

export interface Consent {
  userId: string;
  clientId: string;
  scope: string[];
  createdAt: number;
  updatedAt: number;
}

export interface SigningKey {
  kid: string;
  alg: IdTokenAlg;
  privateKeyPem: string;
  publicJwk: Record<string, string>;
  createdAt: number;
  /** Set when a newer key takes over signing; the key stays published until expiresAt. */
  retiredAt: number | null;
  expiresAt: number | null;
}

export interface Session {
  idHash: string;
  userId: string;
  authTime: number;
  createdAt: number;
  expiresAt: number;
  /**
   * The session's public identifier (OpenID Connect `sid`): safe to show to
   * applications and on the account page, unlike the cookie. It survives a
   * re-authentication of the same person, so applications keep matching it.
   */
  sid?: string;
  /** The browser that signed in, as it named itself (shown on the account page). */
  userAgent?: string | null;
  /** The address of the session's last use (the account page tells sessions apart by it). */
  ip?: string | null;
  /** When a request last came with the session; written at most once a minute (SessionManager.resolve). */
  lastUsedAt?: number | null;
  /**
   * When the person last gave the password or a second factor to this
   * session after signing in (sudo mode, src/core/reauth.ts); absent: only
   * at sign-in (`authTime`).
   */
  verifiedAt?: number;
  /** How the person signed in (RFC 8176 methods, src/core/oidc/acr.ts); absent for sessions from before 0033. */
  amr?: string[];
}
