import { safeEqual } from '../crypto.js';
import { ACCEPTED_ALGORITHMS, JwtRejected, verifyJwt, type RejectReason } from '../jwt-verify.js';
import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { RemoteJwks } from '../resource/jwks.js';
import { badSignIn } from './errors.js';

const SKEW_SECONDS = 60;

/** What the person is told for each refusal. */
const PROBLEMS: Record<RejectReason, string> = {
  malformed: 'the provider\'s ID token is malformed',
  algorithm: 'the provider\'s ID token uses an algorithm we do not accept',
  key: 'the provider\'s ID token is signed with a key it does not publish',
  signature: 'the provider\'s ID token has a bad signature',
  typ: 'the provider\'s ID token is malformed',
  issuer: 'the ID token was issued by someone else',
  audience: 'the ID token is meant for another application',
  expired: 'the ID token has expired',
  not_yet_valid: 'the ID token is not valid yet',
  claims: 'the provider\'s ID token lacks a required claim',
};

export interface IdTokenExpectations {
  issuer: string;
  clientId: string;
  jwksUri: string;
  nonce: string;
}

/**
 * Checks an ID token from a provider as OpenID Connect Core §3.1.3.7 asks:
 * signed by a key from the provider's JWKS with an allowed algorithm, `iss`
 * the provider, `aud` us (and `azp` us when there are several audiences),
 * not expired, and carrying the `nonce` of this sign-in (replay). Returns
 * the claims.
 */
export class IdTokenVerifier {
  private readonly keySets = new Map<string, RemoteJwks>();

  constructor(private readonly deps: { http: OutboundHttp; clock: Clock }) {}

  private keys(uri: string): RemoteJwks {
    let ks = this.keySets.get(uri);
    if (!ks) {
      ks = new RemoteJwks({ uri, http: this.deps.http, clock: this.deps.clock });
      this.keySets.set(uri, ks);
    }
    return ks;
  }

  async verify(token: unknown, want: IdTokenExpectations): Promise<Record<string, unknown>> {
    if (typeof token !== 'string') throw badSignIn('the provider sent no ID token');
    let claims: Record<string, unknown>;
    try {
      ({ claims } = await verifyJwt(token, {
        // A key is found by its kid; a token without one names no key.
        keys: (header) => (typeof header.kid === 'string' ? this.keys(want.jwksUri).get(header.kid) : undefined),
        issuer: want.issuer,
        audience: want.clientId,
        algorithms: ACCEPTED_ALGORITHMS,
        clockTolerance: SKEW_SECONDS,
        requiredClaims: ['exp', 'iat', 'sub', 'nonce'],
        now: this.deps.clock.now(),
      }));
    } catch (e) {
      if (e instanceof JwtRejected) throw badSignIn(PROBLEMS[e.reason]);
      throw e;
    }
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (aud.length > 1 && claims.azp !== want.clientId) throw badSignIn(PROBLEMS.audience);
    if (typeof claims.nonce !== 'string' || !safeEqual(claims.nonce, want.nonce)) throw badSignIn('the ID token belongs to another sign-in');
    if (typeof claims.sub !== 'string' || !claims.sub) throw badSignIn('the ID token names no subject');
    return claims;
  }
}
