import type { Client, ClientAuthMethod, IdTokenAlg } from '../model.js';
import { parseJwks } from './client-assertion.js';
import { cibaClientOptions, type CibaClientFields, type CibaClientInput } from './ciba-options.js';

/** The registration settings of the current generation of OAuth (docs/oauth.md, Current OAuth). */
export interface CurrentClientInput extends CibaClientInput {
  /** OpenID Connect Registration §2 `id_token_signed_response_alg`: ES256 (default) or RS256. */
  idTokenAlg?: string | undefined;
  /** RFC 9126 §6 `require_pushed_authorization_requests`. */
  requirePar?: boolean | undefined;
  /** RFC 7591 §2: the public keys of a `private_key_jwt` client, inline (a JSON JWK Set) or by URL. */
  jwks?: string | undefined;
  jwksUri?: string | undefined;
  /** RFC 9449 §5.2 `dpop_bound_access_tokens` (`--dpop`). */
  dpop?: boolean | undefined;
  /** RFC 8693 for a public client (`--public-token-exchange`): by default only confidential clients exchange tokens. */
  publicTokenExchange?: boolean | undefined;
}

export type CurrentClientFields = Pick<Client, 'idTokenAlg' | 'requirePar' | 'jwks' | 'jwksUri' | 'dpopBoundAccessTokens' | 'publicTokenExchange'> & CibaClientFields;

/**
 * What a client assertion's `aud` may name (RFC 7523 §3 item 3; OpenID
 * Connect Core §9 names the token endpoint, FAPI 2.0 and RFC 7523bis the issuer).
 */
export function clientAssertionAudiences(issuer: string): string[] {
  return [issuer, `${issuer}/oauth/token`, `${issuer}/login/oauth/access_token`, `${issuer}/oauth/par`, `${issuer}/oauth/check_token`, `${issuer}/oauth/revoke`];
}

const ID_TOKEN_ALGS: readonly IdTokenAlg[] = ['ES256', 'RS256'];

/**
 * Validates the settings and returns the client fields they become, or what
 * is wrong with them (shown to the administrator as it is).
 */
export function currentClientOptions(input: CurrentClientInput, authMethod: ClientAuthMethod): CurrentClientFields | string {
  const out: CurrentClientFields = {};
  const jwks = input.jwks?.trim();
  const jwksUri = input.jwksUri?.trim();
  if (authMethod === 'private_key_jwt') {
    if (Boolean(jwks) === Boolean(jwksUri)) return 'private_key_jwt needs the client\'s public keys: --jwks or --jwks-uri (one of them)';
    if (jwks) {
      const parsed = parseJwks(jwks);
      if (typeof parsed === 'string') return parsed;
      out.jwks = jwks;
    }
    if (jwksUri) {
      let u: URL;
      try {
        u = new URL(jwksUri);
      } catch {
        return 'jwks_uri must be an absolute https URL';
      }
      // Fetched server-side through the outbound module, whose address rules apply at each fetch.
      if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password || u.hash || jwksUri.length > 2000) return 'jwks_uri must be an absolute http(s) URL without credentials or fragment';
      out.jwksUri = jwksUri;
    }
  } else if (jwks || jwksUri) {
    return 'jwks and jwks_uri are for clients that authenticate with private_key_jwt';
  }
  const alg = input.idTokenAlg?.trim();
  if (alg) {
    if (!ID_TOKEN_ALGS.includes(alg as IdTokenAlg)) return `ID token algorithm must be one of ${ID_TOKEN_ALGS.join(', ')}`;
    if (alg !== 'ES256') out.idTokenAlg = alg as IdTokenAlg;
  }
  if (input.requirePar) out.requirePar = true;
  const ciba = cibaClientOptions(input);
  if (typeof ciba === 'string') return ciba;
  Object.assign(out, ciba);
  if (input.dpop) out.dpopBoundAccessTokens = true;
  if (input.publicTokenExchange) {
    if (authMethod !== 'none') return '--public-token-exchange is for public clients (confidential clients may always exchange tokens)';
    out.publicTokenExchange = true;
  }
  return out;
}
