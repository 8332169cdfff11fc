import type { Clock } from '../ports.js';
import { JwtRejected, verifyJwt, type RejectReason } from '../jwt-verify.js';
import { certBinding } from './binding.js';
import { invalidToken } from './errors.js';
import type { KeySource } from './jwks.js';
import { personClaims, splitScope, userOf, type AccessTokenVerifier, type VerifiedToken } from './token.js';

export interface JwtVerifierOptions {
  keys: KeySource;
  /** Exact `iss` expected (RFC 9068 §4 step 3). */
  issuer: string;
  /** This resource server's identifiers; `aud` must contain one (RFC 9068 §4 step 4). */
  audience: readonly string[];
  /** Signature algorithms accepted (RFC 9068 §4 step 5), a subset of `ACCEPTED_ALGORITHMS`; default ES256. */
  algorithms?: readonly string[];
  clock: Clock;
  /** Allowed clock skew for `exp`/`nbf`, seconds. */
  clockToleranceSec?: number;
}

/** What the RFC 6750 challenge says for each refusal. */
const DESCRIPTIONS: Record<RejectReason, string> = {
  malformed: 'malformed token',
  algorithm: 'signature algorithm not allowed',
  key: 'unknown signing key',
  signature: 'bad signature',
  // RFC 9068 §4 step 1, RFC 8725 §3.11: explicit typing keeps ID tokens and other JWTs out.
  typ: 'not a JWT access token (typ must be at+jwt)',
  issuer: 'token issued by another authorization server',
  audience: 'token is meant for another audience',
  expired: 'token expired',
  not_yet_valid: 'token not valid yet',
  // RFC 9068 §2.2: iss, exp, aud, sub, client_id, iat and jti are required.
  claims: 'token lacks a required claim',
};

/**
 * Local validation of JWT access tokens per RFC 9068 §4, without calling the
 * authorization server on the hot path, by the one JWT verifier
 * (src/core/jwt-verify.ts) with a key from the issuer's JWKS. Revocation is
 * not visible this way: a JWT stays good until it expires.
 */
export class JwtVerifier implements AccessTokenVerifier {
  constructor(private readonly opts: JwtVerifierOptions) {}

  async verify(token: string): Promise<VerifiedToken> {
    let c: Record<string, unknown>;
    try {
      ({ claims: c } = await verifyJwt(token, {
        keys: (header) => (typeof header.kid === 'string' ? this.opts.keys.get(header.kid) : undefined),
        issuer: this.opts.issuer,
        audience: this.opts.audience,
        typ: 'at+jwt',
        ...(this.opts.algorithms ? { algorithms: this.opts.algorithms } : {}),
        clockTolerance: this.opts.clockToleranceSec ?? 0,
        requiredClaims: ['exp', 'sub', 'client_id'],
        now: this.opts.clock.now(),
      }));
    } catch (e) {
      if (e instanceof JwtRejected) throw invalidToken(DESCRIPTIONS[e.reason]);
      throw e;
    }
    if (typeof c.sub !== 'string' || typeof c.client_id !== 'string') throw invalidToken(DESCRIPTIONS.claims);
    return {
      subject: c.sub,
      clientId: c.client_id,
      userId: userOf(c.sub, c.client_id),
      scope: splitScope(c.scope),
      expiresAt: (c.exp as number) * 1000,
      ...(typeof c.iat === 'number' ? { iat: c.iat } : {}),
      jti: typeof c.jti === 'string' ? c.jti : undefined,
      ...certBinding(c.cnf),
      ...personClaims(c),
      via: 'jwt',
    };
  }
}
