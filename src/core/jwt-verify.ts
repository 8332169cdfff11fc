/**
 * The one JWT verifier (RFC 7519 §7.2, RFC 8725): every JWT Gatehouse accepts
 * (its own access tokens at introspection and at the resource server, ID
 * token hints at logout, providers' ID tokens at federated sign-in) is checked
 * here, by `jose`, against one list of algorithms. Signing stays on
 * node:crypto (src/core/oauth/keys.ts): it is the token endpoint's hot path.
 */
import type { KeyObject } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify, type JWTHeaderParameters } from 'jose';

/**
 * JWS algorithms accepted from anyone (RFC 8725 §3.1, RFC 9068 §4 step 5):
 * asymmetric only, so never `none` and never an HMAC keyed with public material.
 * `Ed25519` is RFC 9864's fully-specified name for EdDSA with that curve,
 * which current clients (oauth4webapi, openid-client) put in their JWTs.
 */
export const ACCEPTED_ALGORITHMS: readonly string[] = ['ES256', 'ES384', 'RS256', 'PS256', 'EdDSA', 'Ed25519'];
/**
 * HMAC algorithms, accepted only where the caller says the key is a shared
 * secret the server holds (`client_secret_jwt`, OpenID Connect Core §9), never
 * for keys looked up from public material.
 */
export const HMAC_ALGORITHMS: readonly string[] = ['HS256', 'HS384', 'HS512'];
/** What Gatehouse signs its own tokens with, and so all it accepts as their signature. */
export const GATEHOUSE_ALGORITHMS: readonly string[] = ['ES256'];

/** A bound on what is parsed at all: no JWT we accept comes near it. */
const MAX_TOKEN_LENGTH = 16_384;

export interface VerificationKey {
  key: KeyObject;
  /** The JWK's `alg`, when it names one: the key may then only be used with it (RFC 7517 §4.4). */
  alg?: string | undefined;
}

/** Finds the key a token names (by `kid`); undefined when there is none. */
export type KeyResolver = (header: JWTHeaderParameters) => Promise<VerificationKey | undefined> | VerificationKey | undefined;

export interface JwtVerifyOptions {
  keys: KeyResolver;
  /** Exact `iss`; null only for JWTs that name no issuer (a DPoP proof is signed by the key it carries, RFC 9449 §4.2). */
  issuer: string | null;
  /** `aud` must be, or contain, one of these; omitted: not checked. */
  audience?: string | readonly string[];
  /** Explicit typing (RFC 8725 §3.11), compared as media types (`at+jwt` = `application/at+jwt`). */
  typ?: string;
  /** A subset of ACCEPTED_ALGORITHMS (anything else is dropped); default GATEHOUSE_ALGORITHMS. */
  algorithms?: readonly string[];
  /** Allowed clock skew for `exp` and `nbf`, seconds. */
  clockTolerance?: number;
  requiredClaims?: readonly string[];
  /** The current time, Unix milliseconds (the injected clock). */
  now: number;
  /** The keys are shared secrets: HMAC_ALGORITHMS may be listed in `algorithms` (and only they then). */
  hmac?: boolean;
  /** Skip only the `exp` check (RP-Initiated Logout 1.0 §2 accepts expired ID token hints). */
  allowExpired?: boolean;
}

export type RejectReason = 'malformed' | 'algorithm' | 'key' | 'signature' | 'typ' | 'issuer' | 'audience' | 'expired' | 'not_yet_valid' | 'claims';

/**
 * Why a JWT was refused; callers turn it into their own `GatehouseError`
 * (RFC 6750 `invalid_token`, a sign-in error…), so it is never an answer itself.
 */
export class JwtRejected extends Error {
  override name = 'JwtRejected';
  constructor(readonly reason: RejectReason, message: string) {
    super(message);
  }
}

export interface VerifiedJwt {
  header: JWTHeaderParameters;
  claims: Record<string, unknown>;
}

const CLAIM_REASONS: Record<string, RejectReason> = { typ: 'typ', iss: 'issuer', aud: 'audience', nbf: 'not_yet_valid', exp: 'expired' };

function rejection(e: unknown): unknown {
  if (e instanceof JwtRejected) return e;
  if (e instanceof errors.JWTExpired) return new JwtRejected('expired', 'token expired');
  if (e instanceof errors.JWTClaimValidationFailed) {
    const reason = e.reason === 'missing' ? 'claims' : CLAIM_REASONS[e.claim] ?? 'claims';
    return new JwtRejected(reason, e.message);
  }
  if (e instanceof errors.JOSEAlgNotAllowed) return new JwtRejected('algorithm', 'signature algorithm not allowed');
  if (e instanceof errors.JWSSignatureVerificationFailed) return new JwtRejected('signature', 'bad signature');
  if (e instanceof errors.JOSEError) return new JwtRejected('malformed', e.message);
  // jose refuses a key that does not fit the algorithm (an RSA key for ES256…) with a TypeError.
  if (e instanceof TypeError) return new JwtRejected('key', 'the signing key does not fit the algorithm');
  // Anything else (a key source that could not be reached) is not a verdict on the token.
  return e;
}

/**
 * Verifies signature, algorithm, `typ`, `iss`, `aud`, `exp`/`nbf` and the
 * presence of `requiredClaims`; critical headers it does not understand are
 * refused (RFC 7515 §4.1.11). Throws `JwtRejected`, or the key source's own
 * error when the keys could not be had.
 */
export async function verifyJwt(token: string, opts: JwtVerifyOptions): Promise<VerifiedJwt> {
  if (token.length > MAX_TOKEN_LENGTH) throw new JwtRejected('malformed', 'token too long');
  const algorithms = (opts.algorithms ?? GATEHOUSE_ALGORITHMS).filter((a) => (opts.hmac ? HMAC_ALGORITHMS : ACCEPTED_ALGORITHMS).includes(a));
  const resolve = async (header: JWTHeaderParameters) => {
    const found = await opts.keys(header);
    if (!found) throw new JwtRejected('key', 'unknown signing key');
    if (found.alg !== undefined && found.alg !== header.alg) throw new JwtRejected('algorithm', 'signature algorithm does not match the key');
    return found.key;
  };
  try {
    const { payload, protectedHeader } = await jwtVerify(token, resolve, {
      algorithms: [...algorithms],
      ...(opts.issuer !== null ? { issuer: opts.issuer } : {}),
      ...(opts.audience !== undefined ? { audience: typeof opts.audience === 'string' ? opts.audience : [...opts.audience] } : {}),
      ...(opts.typ !== undefined ? { typ: opts.typ } : {}),
      clockTolerance: opts.clockTolerance ?? 0,
      requiredClaims: [...(opts.requiredClaims ?? [])],
      currentDate: new Date(opts.now),
    });
    return { header: protectedHeader, claims: payload as Record<string, unknown> };
  } catch (e) {
    // Every check before `exp` has passed when jose reports expiry (jwt_claims_set.js).
    if (opts.allowExpired && e instanceof errors.JWTExpired && e.claim === 'exp') {
      return { header: decodeProtectedHeader(token) as JWTHeaderParameters, claims: e.payload as Record<string, unknown> };
    }
    throw rejection(e);
  }
}
