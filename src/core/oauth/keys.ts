import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { createDecoder, createVerifier } from 'fast-jwt';
import type { Clock, KeyStore } from '../ports.js';
import type { SigningKey } from '../model.js';

/** RFC 7638 JWK thumbprint of an EC public key: the key id. */
function thumbprint(jwk: { crv: string; kty: string; x: string; y: string }): string {
  const canonical = JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y });
  return createHash('sha256').update(canonical).digest('base64url');
}

export function generateSigningKey(now: number): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as { crv: string; kty: string; x: string; y: string };
  const kid = thumbprint(jwk);
  return {
    kid,
    alg: 'ES256',
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y, kid, alg: 'ES256', use: 'sig' },
    createdAt: now,
    retiredAt: null,
    expiresAt: null,
  };
}

type VerifySync = (token: string) => Record<string, unknown>;

interface LoadedKey {
  key: SigningKey;
  publicKey: KeyObject;
  verifiers: Map<string, VerifySync>;
}

const decodeComplete = createDecoder({ complete: true });

/**
 * Verified tokens are remembered this long, by their exact bytes: the same
 * bytes verify the same way under the same key, so only `exp` (against the
 * clock) and the key's presence are checked again. Introspection and the
 * token table see the same token again and again (every API call of its
 * holder); an ES256 verification costs about 50 µs, a lookup under 1 µs.
 * Failures are never remembered.
 */
const VERIFIED_TTL_MS = 60_000;
const VERIFIED_MAX = 10_000;

interface Verified {
  claims: Record<string, unknown>;
  kid: string;
  until: number;
}
const base64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url');

/**
 * The signing keys: one active key signs, retired keys stay published (and
 * verifiable) until the tokens they signed have expired. Several processes
 * share the key table, so the ring reloads it periodically and whenever it
 * meets a `kid` it does not know (a rotation done by another process).
 */
export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  /** The signing key, parsed once, and its encoded JOSE header per `typ`. */
  private active: { kid: string; privateKey: KeyObject; headers: Map<string, string> } | undefined;
  private loadedAt = 0;
  private reloading: Promise<void> | undefined;
  /** Per verification options (typ, issuer, audience): token → claims it verified to. */
  private readonly verified = new Map<string, Map<string, Verified>>();

  constructor(
    private readonly store: KeyStore,
    private readonly clock: Clock,
    private readonly reloadEveryMs = 60_000,
  ) {}

  /** Loads keys, creating the first one on first start. */
  async init(): Promise<void> {
    await this.reload();
    if (!this.active) {
      await this.store.add(generateSigningKey(this.clock.now()));
      await this.reload();
    }
  }

  /** `gatehouse keys rotate`: a new key signs from now on; old ones stay published until `keepOldUntil`. */
  async rotate(keepOldUntil: number): Promise<SigningKey> {
    const key = generateSigningKey(this.clock.now());
    await this.store.add(key);
    await this.store.retireOthers(key.kid, this.clock.now(), keepOldUntil);
    await this.reload();
    return key;
  }

  private async reload(): Promise<void> {
    this.reloading ??= (async () => {
      try {
        const now = this.clock.now();
        const rows = (await this.store.list()).filter((k) => k.expiresAt === null || k.expiresAt > now);
        const next = new Map<string, LoadedKey>();
        for (const key of rows) {
          const existing = this.keys.get(key.kid);
          next.set(key.kid, existing ? { ...existing, key } : { key, publicKey: createPublicKey({ key: key.publicJwk, format: 'jwk' }), verifiers: new Map() });
        }
        this.keys = next;
        const newestActive = rows.filter((k) => k.retiredAt === null).sort((a, b) => b.createdAt - a.createdAt)[0];
        if (newestActive && newestActive.kid !== this.active?.kid) {
          this.active = { kid: newestActive.kid, privateKey: createPrivateKey(newestActive.privateKeyPem), headers: new Map() };
        } else if (!newestActive) {
          this.active = undefined;
        }
        this.loadedAt = now;
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /** Picks up rotations made by other processes; cheap when nothing is due. */
  maybeReload(): void {
    if (this.clock.now() - this.loadedAt > this.reloadEveryMs) void this.reload().catch(() => {});
  }

  /**
   * Signs a JWS (RFC 7515 compact form) synchronously with node:crypto and a
   * key parsed once: the token endpoint's hot path. ES256 signatures are R||S,
   * not DER (RFC 7518 §3.4). A payload without `iat` gets the current time.
   */
  sign(payload: Record<string, unknown>, typ: string): string {
    this.maybeReload();
    const active = this.active;
    if (!active) throw new Error('no active signing key');
    let header = active.headers.get(typ);
    if (!header) {
      header = base64url(JSON.stringify({ alg: 'ES256', typ, kid: active.kid }));
      active.headers.set(typ, header);
    }
    const claims = payload.iat === undefined ? { ...payload, iat: Math.floor(this.clock.now() / 1000) } : payload;
    const input = `${header}.${base64url(JSON.stringify(claims))}`;
    const signature = cryptoSign('sha256', Buffer.from(input), { key: active.privateKey, dsaEncoding: 'ieee-p1363' });
    return `${input}.${signature.toString('base64url')}`;
  }

  get activeKid(): string | undefined {
    return this.active?.kid;
  }

  /** RFC 7517 JWK Set of every key still published. */
  jwks(): { keys: Record<string, string>[] } {
    this.maybeReload();
    return { keys: [...this.keys.values()].map((k) => k.key.publicJwk) };
  }

  /**
   * Verifies signature, `typ`, `iss`, `exp` (RFC 9068 §4) with an ES256-only
   * allow-list. Returns the claims, or undefined for any failure.
   */
  async verify(token: string, opts: { typ: string; issuer: string; audience?: string }): Promise<Record<string, unknown> | undefined> {
    const cacheKey = `${opts.typ}|${opts.issuer}|${opts.audience ?? ''}`;
    const now = this.clock.now();
    let seen = this.verified.get(cacheKey);
    const hit = seen?.get(token);
    if (hit) {
      // A key that has left the ring (expired) takes its tokens' verdicts with it.
      if (hit.until > now && this.keys.has(hit.kid)) {
        return typeof hit.claims.exp === 'number' && hit.claims.exp * 1000 > now ? hit.claims : undefined;
      }
      seen!.delete(token);
    }
    let header: { kid?: unknown; alg?: unknown };
    try {
      header = (decodeComplete(token) as { header: typeof header }).header;
    } catch {
      return undefined;
    }
    if (header.alg !== 'ES256' || typeof header.kid !== 'string') return undefined;
    let loaded = this.keys.get(header.kid);
    if (!loaded) {
      // An unknown kid may be a key rotated in by another process: reload once.
      await this.reload();
      loaded = this.keys.get(header.kid);
      if (!loaded) return undefined;
    }
    let verify = loaded.verifiers.get(cacheKey);
    if (!verify) {
      verify = createVerifier({
        key: loaded.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
        algorithms: ['ES256'],
        checkTyp: opts.typ,
        allowedIss: opts.issuer,
        ...(opts.audience ? { allowedAud: opts.audience } : {}),
        requiredClaims: ['exp', 'iat', 'jti'],
        // Expiry is checked below against the injected clock, so tests control time.
        ignoreExpiration: true,
      }) as VerifySync;
      loaded.verifiers.set(cacheKey, verify);
    }
    let claims: Record<string, unknown>;
    try {
      claims = verify(token);
    } catch {
      return undefined;
    }
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= now) return undefined;
    if (!seen) this.verified.set(cacheKey, (seen = new Map()));
    // Bounded: the oldest entry goes first (a Map iterates in insertion order).
    if (seen.size >= VERIFIED_MAX) seen.delete(seen.keys().next().value!);
    seen.set(token, { claims, kid: header.kid, until: now + VERIFIED_TTL_MS });
    return claims;
  }
}
