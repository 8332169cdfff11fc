import { safeEqual } from '../crypto.js';
import type { Clock } from '../ports.js';
import { RemoteJwks } from '../resource/jwks.js';
import { signatureValid } from '../resource/jwt.js';
import { badSignIn } from './errors.js';

/** Asymmetric algorithms only: never `none`, never an HMAC keyed with our client secret. */
const ALGORITHMS = new Set(['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA']);
const SKEW_SECONDS = 60;
const B64URL = /^[A-Za-z0-9_-]+$/;

function part(p: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

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

  constructor(private readonly deps: { fetch: typeof fetch; clock: Clock }) {}

  private keys(uri: string): RemoteJwks {
    let ks = this.keySets.get(uri);
    if (!ks) {
      ks = new RemoteJwks({ uri, fetch: this.deps.fetch, clock: this.deps.clock });
      this.keySets.set(uri, ks);
    }
    return ks;
  }

  async verify(token: unknown, want: IdTokenExpectations): Promise<Record<string, unknown>> {
    if (typeof token !== 'string') throw badSignIn('the provider sent no ID token');
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) throw badSignIn('the provider\'s ID token is malformed');
    const [h, p, s] = parts as [string, string, string];
    const header = part(h);
    const claims = part(p);
    if (!header || !claims) throw badSignIn('the provider\'s ID token is malformed');
    if (typeof header.alg !== 'string' || !ALGORITHMS.has(header.alg)) throw badSignIn('the provider\'s ID token uses an algorithm we do not accept');
    if (header.crit !== undefined) throw badSignIn('the provider\'s ID token has critical headers we do not understand');
    // Without a kid, a set of one key is unambiguous (OpenID Connect Core §10.1).
    const key = typeof header.kid === 'string' ? await this.keys(want.jwksUri).get(header.kid) : undefined;
    if (!key) throw badSignIn('the provider\'s ID token is signed with a key it does not publish');
    if (key.alg !== undefined && key.alg !== header.alg) throw badSignIn('the provider\'s ID token does not match its key');
    let valid = false;
    try {
      valid = signatureValid(header.alg, key, `${h}.${p}`, Buffer.from(s, 'base64url'));
    } catch {
      valid = false;
    }
    if (!valid) throw badSignIn('the provider\'s ID token has a bad signature');

    const now = this.deps.clock.now() / 1000;
    if (claims.iss !== want.issuer) throw badSignIn('the ID token was issued by someone else');
    const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
    if (!aud.includes(want.clientId)) throw badSignIn('the ID token is meant for another application');
    if (aud.length > 1 && claims.azp !== want.clientId) throw badSignIn('the ID token is meant for another application');
    if (typeof claims.exp !== 'number' || claims.exp + SKEW_SECONDS <= now) throw badSignIn('the ID token has expired');
    if (typeof claims.iat !== 'number') throw badSignIn('the ID token has no issue time');
    if (typeof claims.nonce !== 'string' || !safeEqual(claims.nonce, want.nonce)) throw badSignIn('the ID token belongs to another sign-in');
    if (typeof claims.sub !== 'string' || !claims.sub) throw badSignIn('the ID token names no subject');
    return claims;
  }
}
