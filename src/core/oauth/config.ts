/** What the OAuth core needs to know about the deployment. Lifetimes in seconds. */
export interface OAuthConfig {
  /** RFC 8414 issuer identifier; also `iss` in tokens and authorization responses (RFC 9207). */
  issuer: string;
  /** Default `aud` of access tokens: the resource server (RFC 9068 §2.2). */
  audience: string;
  accessTokenTtl: number;
  /** RFC 6749 §4.1.2 recommends at most 10 minutes; we default to 60 s. */
  codeTtl: number;
  refreshTokenTtl: number;
  /** Grace during client secret rotation, seconds. */
  secretRotationGrace: number;
}

export const defaultOAuthConfig = (issuer: string, audience: string): OAuthConfig => ({
  issuer,
  audience,
  accessTokenTtl: 3600,
  codeTtl: 60,
  refreshTokenTtl: 30 * 24 * 3600,
  secretRotationGrace: 24 * 3600,
});
