import * as jose from 'jose';

/** OpenID Connect Back-Channel Logout 1.0 §2.4. */
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How old a logout token may be; also how long its jti is remembered against replay. */
const MAX_AGE_S = 300;

export interface VerifiedLogout {
  sub: string | undefined;
  sid: string | undefined;
  jti: string;
}

/**
 * A relying party's checks of a logout token (§2.6), with jose (the JOSE
 * library openid-client itself is built on): signature by a key in the
 * issuer's JWKS, `typ: logout+jwt`, `iss`, `aud`, a recent `iat`, the
 * back-channel logout event, `sub` or `sid`, no `nonce`, and a `jti` not seen
 * before.
 */
export class LogoutTokenVerifier {
  private readonly jwks: ReturnType<typeof jose.createRemoteJWKSet>;
  private readonly seen = new Map<string, number>();

  constructor(private readonly issuer: string, jwksUri: string, private readonly clientId: string) {
    this.jwks = jose.createRemoteJWKSet(new URL(jwksUri));
  }

  async verify(token: string): Promise<VerifiedLogout> {
    const { payload } = await jose.jwtVerify(token, this.jwks, {
      issuer: this.issuer, audience: this.clientId, algorithms: ['ES256'], typ: 'logout+jwt',
      requiredClaims: ['iat', 'jti', 'events'], maxTokenAge: MAX_AGE_S,
    });
    const events = payload.events as Record<string, unknown> | undefined;
    if (!events || typeof events[EVENT] !== 'object') throw new Error('not a back-channel logout event');
    if (payload.nonce !== undefined) throw new Error('a logout token must not carry a nonce');
    const sub = typeof payload.sub === 'string' ? payload.sub : undefined;
    const sid = typeof payload.sid === 'string' ? payload.sid : undefined;
    if (!sub && !sid) throw new Error('a logout token names sub or sid');
    const now = Date.now();
    for (const [jti, at] of this.seen) if (now - at > MAX_AGE_S * 1000) this.seen.delete(jti);
    if (this.seen.has(payload.jti!)) throw new Error('logout token replayed');
    this.seen.set(payload.jti!, now);
    return { sub, sid, jti: payload.jti! };
  }
}
