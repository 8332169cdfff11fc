/** What the OAuth core needs to know about the deployment. Lifetimes in seconds. */
export interface OAuthConfig {
  /** RFC 8414 issuer identifier; also `iss` in tokens and authorization responses (RFC 9207). */
  readonly issuer: string;
  /** Default `aud` of access tokens: the resource server (RFC 9068 §2.2). */
  readonly audience: string;
  readonly accessTokenTtl: number;
  /** RFC 6749 §4.1.2 recommends at most 10 minutes; we default to 60 s. */
  readonly codeTtl: number;
  readonly refreshTokenTtl: number;
  /** Grace during client secret rotation, seconds. */
  readonly secretRotationGrace: number;
}

export const defaultOAuthConfig = (issuer: string, audience: string): OAuthConfig => ({
  issuer,
  audience,
  accessTokenTtl: 3600,
  codeTtl: 60,
  refreshTokenTtl: 30 * 24 * 3600,
  secretRotationGrace: 24 * 3600,
});
