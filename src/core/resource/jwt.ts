import { verify as verifySignature, type KeyObject } from 'node:crypto';
import type { Clock } from '../ports.js';
import { certBinding } from './binding.js';
import { invalidToken } from './errors.js';
import type { KeySource, PublicKey } from './jwks.js';
import { audienceMatches, splitScope, userOf, type AccessTokenVerifier, type VerifiedToken } from './token.js';

export interface JwtVerifierOptions {
  keys: KeySource;
  /** Exact `iss` expected (RFC 9068 §4 step 3). */
  issuer: string;
  /** This resource server's identifiers; `aud` must contain one (RFC 9068 §4 step 4). */
  audience: readonly string[];
  /** Signature algorithms accepted (RFC 9068 §4 step 5, RFC 8725 §3.1); never `none`, never HMAC. */
  algorithms?: readonly string[];
  clock: Clock;
  /** Allowed clock skew for `exp`/`nbf`, seconds. */
  clockToleranceSec?: number;
}

const SUPPORTED = new Set(['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA']);
const B64URL = /^[A-Za-z0-9_-]+$/;

/** Which JWK may sign with which algorithm, and how node:crypto checks it. */
export function signatureValid(alg: string, k: PublicKey, input: string, sig: Buffer): boolean {
  const check = (hash: string | null, key: KeyObject | { key: KeyObject; dsaEncoding?: 'ieee-p1363'; padding?: number; saltLength?: number }) =>
    verifySignature(hash, Buffer.from(input), key, sig);
  switch (alg) {
    case 'ES256':
      return k.kty === 'EC' && k.crv === 'P-256' && sig.length === 64 && check('sha256', { key: k.key, dsaEncoding: 'ieee-p1363' });
    case 'ES384':
      return k.kty === 'EC' && k.crv === 'P-384' && sig.length === 96 && check('sha384', { key: k.key, dsaEncoding: 'ieee-p1363' });
    case 'RS256':
      return k.kty === 'RSA' && check('sha256', k.key);
    case 'PS256':
      return k.kty === 'RSA' && check('sha256', { key: k.key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 });
    case 'EdDSA':
      return k.kty === 'OKP' && check(null, k.key);
    default:
      return false;
  }
}

function decodeJson(part: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Local validation of JWT access tokens per RFC 9068 §4, without calling the
 * authorization server on the hot path: `typ` is `at+jwt`, the algorithm is
 * on the allow-list and fits the key, the signature verifies with a key from
 * the issuer's JWKS, `iss` and `aud` match, `exp` is in the future. Revocation
 * is not visible this way: a JWT stays good until it expires.
 */
export class JwtVerifier implements AccessTokenVerifier {
  private readonly algorithms: ReadonlySet<string>;

  constructor(private readonly opts: JwtVerifierOptions) {
    this.algorithms = new Set((opts.algorithms ?? ['ES256']).filter((a) => SUPPORTED.has(a)));
  }

  async verify(token: string): Promise<VerifiedToken> {
    const parts = token.split('.');
    if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) throw invalidToken('malformed token');
    const [h, p, s] = parts as [string, string, string];
    const header = decodeJson(h);
    if (!header) throw invalidToken('malformed token header');
    // RFC 9068 §4 step 1, RFC 8725 §3.11: explicit typing keeps ID tokens and other JWTs out.
    if (typeof header.typ !== 'string' || !['at+jwt', 'application/at+jwt'].includes(header.typ.toLowerCase())) {
      throw invalidToken('not a JWT access token (typ must be at+jwt)');
    }
    if (typeof header.alg !== 'string' || !this.algorithms.has(header.alg)) throw invalidToken('signature algorithm not allowed');
    // RFC 7515 §4.1.11: extensions we do not understand must not be ignored.
    if (header.crit !== undefined) throw invalidToken('unsupported critical header');
    if (typeof header.kid !== 'string') throw invalidToken('token header has no kid');
    const key = await this.opts.keys.get(header.kid);
    if (!key) throw invalidToken('unknown signing key');
    if (key.alg !== undefined && key.alg !== header.alg) throw invalidToken('signature algorithm does not match the key');
    let valid: boolean;
    try {
      valid = signatureValid(header.alg, key, `${h}.${p}`, Buffer.from(s, 'base64url'));
    } catch {
      valid = false;
    }
    if (!valid) throw invalidToken('bad signature');
    const c = decodeJson(p);
    if (!c) throw invalidToken('malformed token claims');
    return this.claims(c);
  }

  private claims(c: Record<string, unknown>): VerifiedToken {
    const now = this.opts.clock.now();
    const skew = (this.opts.clockToleranceSec ?? 0) * 1000;
    if (c.iss !== this.opts.issuer) throw invalidToken('token issued by another authorization server');
    if (!audienceMatches(c.aud, this.opts.audience)) throw invalidToken('token is meant for another audience');
    if (typeof c.exp !== 'number' || !Number.isFinite(c.exp)) throw invalidToken('token has no expiry');
    if (c.exp * 1000 + skew <= now) throw invalidToken('token expired');
    if (typeof c.nbf === 'number' && c.nbf * 1000 - skew > now) throw invalidToken('token not valid yet');
    // RFC 9068 §2.2: sub and client_id are required.
    if (typeof c.sub !== 'string' || typeof c.client_id !== 'string') throw invalidToken('token lacks sub or client_id');
    return {
      subject: c.sub,
      clientId: c.client_id,
      userId: userOf(c.sub, c.client_id),
      scope: splitScope(c.scope),
      expiresAt: c.exp * 1000,
      jti: typeof c.jti === 'string' ? c.jti : undefined,
      ...certBinding(c.cnf),
      via: 'jwt',
    };
  }
}
