import type { TokenInfo } from '../oauth/inspect.js';
import type { Clock } from '../ports.js';
import { invalidToken } from './errors.js';
import { audienceMatches, type AccessTokenVerifier, type VerifiedToken } from './token.js';

/**
 * Looks tokens up where the authorization server keeps them (`table` in
 * docs/oauth.md, Resource server): for a resource server that shares Gatehouse's storage. The
 * inspector checks JWT signatures and the revocation list, opaque tokens by
 * hash, and token families; this adds what a resource server must add.
 */
export class TableVerifier implements AccessTokenVerifier {
  constructor(
    private readonly inspector: { inspect(token: string): Promise<TokenInfo | undefined> },
    private readonly opts: { audience: readonly string[]; clock: Clock },
  ) {}

  async verify(token: string): Promise<VerifiedToken> {
    const info = await this.inspector.inspect(token);
    // A refresh token is never a bearer credential for a resource (RFC 6749 §1.5).
    if (!info || info.kind !== 'access_token') throw invalidToken('unknown or invalid access token');
    if (!info.active) throw invalidToken('token revoked');
    if (info.exp * 1000 <= this.opts.clock.now()) throw invalidToken('token expired');
    // RFC 9068 §4 step 4: a token names its audience, and it must be us; one naming none is refused too.
    if (!audienceMatches(info.aud, this.opts.audience)) throw invalidToken('token is meant for another audience');
    return {
      subject: info.userId ?? info.clientId,
      clientId: info.clientId,
      userId: info.userId,
      scope: info.scope,
      expiresAt: info.exp * 1000,
      iat: info.iat,
      jti: info.jti,
      ...(info.certThumbprint ? { certThumbprint: info.certThumbprint } : {}),
      ...(info.dpopJkt ? { dpopJkt: info.dpopJkt } : {}),
      via: 'table',
    };
  }
}
