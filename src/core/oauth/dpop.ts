import { createHmac, createPublicKey, randomBytes, timingSafeEqual, type JsonWebKey, type KeyObject } from 'node:crypto';
import { sha256 } from '../crypto.js';
import { invalidDpopProof, useDpopNonce } from '../errors.js';
import { JwtRejected, verifyJwt, type VerificationKey } from '../jwt-verify.js';
import type { Clock } from '../ports.js';
import type { Params } from '../params.js';
import type { ReplayStore } from './client-assertion.js';

/**
 * DPoP (RFC 9449): the one proof check, used by the token endpoint (§5) and
 * by resource servers (§7: Gatehouse's API and `gatehouse/middleware`). A
 * proof is a JWT the client signs with a key whose public half it carries in
 * the header; tokens are bound to that key by its RFC 7638 thumbprint (`jkt`).
 */

/** Asymmetric only (§4.2 `alg`), and only these (the metadata's `dpop_signing_alg_values_supported`). */
export const DPOP_ALGORITHMS: readonly string[] = ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519'];

/** A base64url SHA-256 thumbprint is 43 characters (RFC 7638, §10 `dpop_jkt`). */
export const JKT = /^[A-Za-z0-9_-]{43}$/;

/** How old a proof may be (§4.3 check 11, §11.1), and how far ahead of our clock. */
const MAX_AGE_SECONDS = 300;
const FUTURE_SKEW_SECONDS = 60;
const MAX_PROOF_LENGTH = 8192;
/** Members of private or symmetric keys: a proof's `jwk` must hold none (§4.2). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

export interface DpopCheck {
  /** The `DPoP` header as received: more than one (an array, or values joined by commas) is refused. */
  proof: string | readonly string[] | undefined;
  /** The request's method and absolute URL as the client addressed them (§4.3 checks 8 and 9). */
  method: string;
  url: string;
  /** At a resource (§7.1): the access token, whose hash `ath` must be, and the key it is bound to (`cnf.jkt`). */
  accessToken?: string;
  jkt?: string;
}

export interface VerifiedProof {
  /** RFC 7638 SHA-256 thumbprint of the proof's key: what tokens are bound to (`cnf.jkt`, §6). */
  jkt: string;
}

/** The one string of a `DPoP` header, or undefined when there is none; more than one is invalid (§4.3 check 1). */
export function singleProof(proof: string | readonly string[] | undefined): string | undefined {
  if (proof === undefined) return undefined;
  if (typeof proof !== 'string') {
    if (proof.length !== 1) throw invalidDpopProof('more than one DPoP header');
    return singleProof(proof[0]);
  }
  // Node joins repeated headers with ", "; a compact JWS holds no comma or space.
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(proof)) throw invalidDpopProof(proof.includes(',') ? 'more than one DPoP header' : 'the DPoP proof is not a JWT');
  return proof;
}

/** RFC 3986 §6.2.2 and §6.2.3 normalization, without query and fragment (§4.3 check 9). */
export function normalizeHtu(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return undefined;
  // §6.2.2.1: percent-encodings in upper case; §6.2.2.2: unreserved characters decoded.
  const path = u.pathname.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${hex.toUpperCase()}`;
  });
  return `${u.protocol}//${u.host}${path || '/'}`;
}

/** `ath` (§4.2): base64url SHA-256 of the access token's ASCII. */
export const accessTokenHash = (token: string): string => sha256(token);

/** RFC 7638 §3.2: the required members of each key type, in lexicographic order. */
const THUMBPRINT_MEMBERS: Record<string, readonly string[]> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };
const KEY_CACHE_MAX = 10_000;

interface EmbeddedKey extends VerificationKey {
  /** RFC 7638 SHA-256 thumbprint. */
  jkt: string;
}

/**
 * The proofs' keys, by their RFC 7638 input: a client signs many proofs with
 * one key, and parsing a JWK (and the first use of a new key object) costs
 * more than checking the signature.
 */
const keys = new Map<string, EmbeddedKey>();

/** The embedded `jwk` as a verification key: public, of a kind the algorithm fits (jose checks the fit). */
function embeddedKey(jwk: unknown): EmbeddedKey {
  if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) throw new JwtRejected('key', 'the DPoP proof carries no jwk');
  const j = jwk as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((m) => Object.hasOwn(j, m)) || j.kty === 'oct') throw new JwtRejected('key', 'the jwk of a DPoP proof must be a public key');
  // Own names only: a kty of "constructor" must not find Object's.
  const members = typeof j.kty === 'string' && Object.hasOwn(THUMBPRINT_MEMBERS, j.kty) ? THUMBPRINT_MEMBERS[j.kty] : undefined;
  if (!members || members.some((m) => typeof j[m] !== 'string')) throw new JwtRejected('key', 'the jwk of the DPoP proof is not an EC, RSA or OKP public key');
  // RFC 7638 §3.3: the required members only, in that order, no whitespace; the key is made of the same members.
  const input = JSON.stringify(Object.fromEntries(members.map((m) => [m, j[m]])));
  const known = keys.get(input);
  if (known) return known;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: JSON.parse(input) as JsonWebKey, format: 'jwk' });
  } catch {
    throw new JwtRejected('key', 'the jwk of the DPoP proof is not a valid public key');
  }
  if (keys.size >= KEY_CACHE_MAX) keys.clear();
  const entry = { key, jkt: sha256(input) };
  keys.set(input, entry);
  return entry;
}

export interface DpopVerifierOptions {
  /** `jti`s seen (the store private_key_jwt assertions use): the first proof with one wins, across processes. */
  replay: ReplayStore;
  clock: Clock;
  /** When set, proofs must carry one of its nonces (§9); a missing or stale one gets `use_dpop_nonce`. */
  nonces?: DpopNonces | undefined;
}

/**
 * §4.3: one proof, `typ` dpop+jwt, an accepted asymmetric `alg`, a signature
 * by the public `jwk` it carries, `htm` and `htu` of this request, `iat`
 * within the window, `ath` of the presented token, the server's nonce when it
 * demands one, and a `jti` never seen (checked last, so a proof failing any
 * other check is not remembered). Throws `invalid_dpop_proof` (400; a
 * resource makes it 401) or `use_dpop_nonce`.
 */
export class DpopVerifier {
  constructor(private readonly opts: DpopVerifierOptions) {}

  get nonces(): DpopNonces | undefined {
    return this.opts.nonces;
  }

  async verify(check: DpopCheck): Promise<VerifiedProof> {
    const proof = singleProof(check.proof);
    if (proof === undefined) throw invalidDpopProof('a DPoP proof is required');
    if (proof.length > MAX_PROOF_LENGTH) throw invalidDpopProof('the DPoP proof is too long');
    const now = this.opts.clock.now();
    let embedded: EmbeddedKey | undefined;
    let claims: Record<string, unknown>;
    try {
      ({ claims } = await verifyJwt(proof, {
        keys: (header) => (embedded = embeddedKey(header.jwk)),
        issuer: null, typ: 'dpop+jwt', algorithms: DPOP_ALGORITHMS, requiredClaims: ['jti', 'htm', 'htu', 'iat'], clockTolerance: FUTURE_SKEW_SECONDS, now,
      }));
    } catch (e) {
      if (e instanceof JwtRejected) throw invalidDpopProof(`invalid DPoP proof: ${e.message}`);
      throw e;
    }
    const { jti, htm, htu, iat, ath, nonce } = claims;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) throw invalidDpopProof('the DPoP proof needs a jti');
    if (htm !== check.method.toUpperCase()) throw invalidDpopProof('the DPoP proof is for another HTTP method (htm)');
    const expected = normalizeHtu(check.url);
    if (typeof htu !== 'string' || expected === undefined || normalizeHtu(htu) !== expected) throw invalidDpopProof('the DPoP proof is for another URL (htu)');
    const nowSeconds = now / 1000;
    if (typeof iat !== 'number' || iat < nowSeconds - MAX_AGE_SECONDS || iat > nowSeconds + FUTURE_SKEW_SECONDS) throw invalidDpopProof('the DPoP proof is too old or from the future (iat)');
    if (check.accessToken !== undefined && ath !== accessTokenHash(check.accessToken)) throw invalidDpopProof('the DPoP proof is not for this access token (ath)');
    const nonces = this.opts.nonces;
    if (nonces && (typeof nonce !== 'string' || !nonces.valid(nonce, now))) {
      throw useDpopNonce(nonce === undefined ? 'a DPoP nonce is required' : 'the DPoP nonce is stale');
    }
    const { jkt } = embedded!;
    if (check.jkt !== undefined && jkt !== check.jkt) throw invalidDpopProof('the DPoP proof is signed by another key than the access token is bound to');
    if (!(await this.opts.replay.remember(`dpop:${jkt}:${sha256(jti)}`, (iat + MAX_AGE_SECONDS + FUTURE_SKEW_SECONDS) * 1000, now))) {
      throw invalidDpopProof('the DPoP proof was used before (jti)');
    }
    return { jkt };
  }
}

/**
 * Server nonces (§8, §9) without storage: a nonce is a time slot and its
 * HMAC, good in its slot and the next, so any process holding the same
 * secret accepts it and a client needs a new one every few minutes at most.
 */
export class DpopNonces {
  private readonly secret: Buffer;
  private readonly slotMs: number;

  /** `secret`: the same in every process of a deployment (default: random, this process only). */
  constructor(opts: { secret?: Uint8Array; slotMs?: number } = {}) {
    this.secret = Buffer.from(opts.secret ?? randomBytes(32));
    this.slotMs = opts.slotMs ?? 120_000;
  }

  private mac(slot: number): string {
    return createHmac('sha256', this.secret).update(`dpop-nonce:${slot}`).digest('base64url');
  }

  current(now: number): string {
    const slot = Math.floor(now / this.slotMs);
    return `${slot.toString(36)}.${this.mac(slot)}`;
  }

  valid(nonce: string, now: number): boolean {
    const m = /^([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/.exec(nonce);
    if (!m) return false;
    const slot = parseInt(m[1]!, 36);
    const current = Math.floor(now / this.slotMs);
    if (slot !== current && slot !== current - 1) return false;
    const a = Buffer.from(m[2]!, 'base64url');
    const b = Buffer.from(this.mac(slot), 'base64url');
    return a.length === b.length && timingSafeEqual(a, b);
  }
}

/**
 * `jti`s in this process's memory, each until its proof expires: for a
 * resource server of one process (`gatehouse/middleware` without a shared store).
 */
export class MemoryReplayStore implements ReplayStore {
  private readonly seen = new Map<string, number>();
  private purgedAt = 0;

  constructor(private readonly maxEntries = 100_000) {}

  async remember(key: string, expiresAt: number, now: number): Promise<boolean> {
    if (now - this.purgedAt > 60_000 || this.seen.size >= this.maxEntries) {
      this.purgedAt = now;
      for (const [k, exp] of this.seen) if (exp < now) this.seen.delete(k);
      // Still full of live entries: refuse rather than forget one (a forgotten jti could be replayed).
      if (this.seen.size >= this.maxEntries) return false;
    }
    const exp = this.seen.get(key);
    if (exp !== undefined && exp >= now) return false;
    this.seen.set(key, expiresAt);
    return true;
  }
}

/** A token request's DPoP header and where it was sent (§4.3 checks 8 and 9). */
export interface DpopRequest {
  proof: string | readonly string[] | undefined;
  method: string;
  /** The token endpoint's public URL the request came to. */
  url: string;
}

/**
 * §5: the key a token request's proof proves, which the tokens it gets are
 * bound to; undefined without a proof. A client registered with
 * `dpop_bound_access_tokens` (§5.2) must send one.
 */
export async function tokenRequestKey(verifier: DpopVerifier | undefined, dpop: DpopRequest | undefined, client: { dpopBoundAccessTokens?: boolean }): Promise<string | undefined> {
  if (dpop?.proof === undefined) {
    if (client.dpopBoundAccessTokens) throw invalidDpopProof('this client must send a DPoP proof (its tokens are DPoP-bound)');
    return undefined;
  }
  if (!verifier) throw invalidDpopProof('DPoP proofs are not accepted here');
  return (await verifier.verify(dpop)).jkt;
}

/**
 * §10.1: a proof sent with a pushed authorization request binds the code to
 * its key, as `dpop_jkt` does; when both are sent they must name the same key.
 */
export async function pushedRequestKey(verifier: DpopVerifier, dpop: DpopRequest, params: Params): Promise<Params> {
  if (dpop.proof === undefined) return params;
  const { jkt } = await verifier.verify(dpop);
  const named = params.dpop_jkt;
  // A repeated dpop_jkt is left to the request's own checks (invalid_request).
  if (Array.isArray(named)) return params;
  if (named !== undefined && named !== jkt) throw invalidDpopProof('dpop_jkt does not match the key of the DPoP proof');
  return { ...params, dpop_jkt: jkt };
}
