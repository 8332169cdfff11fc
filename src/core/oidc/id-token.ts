import { createHash } from 'node:crypto';
import type { Client, IdTokenAlg } from '../model.js';
import type { Clock, Stores } from '../ports.js';
import type { OAuthConfig } from '../oauth/config.js';
import type { KeyRing } from '../oauth/keys.js';
import type { TokenResponse } from '../oauth/tokens.js';
import { claimValues, decodeClaims } from './claims-request.js';
import type { AccessClaims } from '../access/claims.js';
import { acrFor, amrClaim } from './acr.js';

export const OPENID = 'openid';

/** What ID tokens (and so ID token hints) may be signed with: the ring's two algorithms. */
export const ID_TOKEN_ALGORITHMS: readonly IdTokenAlg[] = ['ES256', 'RS256'];

/**
 * OpenID Connect Core §3.1.3.6: base64url of the left half of the SHA-256
 * of the access token's ASCII octets (SHA-256: the hash of both ES256 and RS256).
 */
export function atHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/** What an ID token is issued from: a redeemed code, or a refresh of a grant that had `openid`. */
export interface IdTokenGrant {
  client: Client;
  userId: string | null;
  /** The scope granted (the original grant's, on refresh). */
  scope: readonly string[];
  familyId: string | null;
  /** From the authorization request (§3.1.2.1); never repeated on refresh (§12.2). */
  nonce: string | null;
  /** Unix milliseconds, when the code says; the sign-in record knows it otherwise. */
  authTime?: number;
}

/**
 * ID tokens (OpenID Connect Core §2), signed with the server's ES256 key, or
 * its RS256 key for a client registered with `id_token_signed_response_alg`
 * RS256 (OpenID Connect Registration §2), `typ: JWT`. They carry identity only; profile and e-mail claims come
 * from the UserInfo endpoint, since an access token is always issued beside
 * them (§5.4).
 */
export class IdTokenIssuer {
  constructor(
    private readonly config: OAuthConfig,
    private readonly keys: KeyRing,
    private readonly clock: Clock,
    /** `groups` and `roles` for grants of those scopes (or asked for with `claims`). */
    private readonly accessClaims?: AccessClaims,
  ) {}

  /**
   * Adds `id_token` to a token response when `openid` was granted to a person
   * who signed in through the authorization endpoint: the code grant
   * (§3.1.3.3) and the refresh of such a grant (§12.2: same `iss`, `sub`,
   * `aud`, `auth_time`; a new `iat`; no `nonce`).
   */
  async attach(stores: Pick<Stores, 'signIns' | 'users'>, response: TokenResponse, grant: IdTokenGrant): Promise<void> {
    if (!grant.userId || !grant.scope.includes(OPENID) || !grant.familyId) return;
    const signIn = await stores.signIns.byFamily(grant.familyId);
    const authTime = grant.authTime ?? signIn?.authTime;
    // A grant that never went through the authorization endpoint (a password grant) has no authentication event to attest.
    if (authTime === undefined) return;
    const iat = Math.floor(this.clock.now() / 1000);
    const claims: Record<string, unknown> = {
      iss: this.config.issuer,
      sub: grant.userId,
      aud: grant.client.id,
      iat,
      exp: iat + this.config.accessTokenTtl,
      auth_time: Math.floor(authTime / 1000),
      at_hash: atHash(response.access_token),
      ...(grant.nonce ? { nonce: grant.nonce } : {}),
      ...(signIn ? { sid: signIn.sid } : {}),
      // Issue 28: the level and methods of the session's sign-in (RFC 8176; src/core/oidc/acr.ts).
      ...(signIn ? { acr: acrFor(signIn.amr), ...(signIn.amr?.length ? { amr: amrClaim(signIn.amr) } : {}) } : {}),
    };
    // OpenID Connect Core §5.5: claims the client asked to find in the ID token itself.
    const asked = decodeClaims(signIn?.claims)?.id_token;
    const user = asked?.length ? await stores.users.get(grant.userId) : undefined;
    if (user) Object.assign(claims, claimValues(user, asked!));
    // Issue 28: who the person is to the application, read now (a refresh after an elevation ended drops it).
    if (this.accessClaims) Object.assign(claims, await this.accessClaims.values(grant.userId, grant.scope, asked ?? []));
    response.id_token = await this.keys.signAsync(claims, 'JWT', grant.client.idTokenAlg ?? 'ES256');
  }
}
