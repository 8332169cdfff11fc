import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { Clock, KeyStore } from '../ports.js';
import type { IdTokenAlg, SigningKey } from '../model.js';
import { GATEHOUSE_ALGORITHMS, verifyJwt } from '../jwt-verify.js';

/** What node:crypto signs with: an ES256 key asks for R||S (RFC 7518 §3.4), not DER. */
type SignKey = KeyObject | { key: KeyObject; dsaEncoding: 'ieee-p1363' };
interface ActiveKey { kid: string; signKey: SignKey; headers: Map<string, string> }

/** RFC 7638 §3.2: the required members in lexicographic order, hashed with SHA-256: the key id. */
function thumbprint(jwk: Record<string, unknown>): string {
  const members = jwk.kty === 'RSA' ? { e: jwk.e, kty: jwk.kty, n: jwk.n } : { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/**
 * Key rotation across processes (servers, workers, and the command line that
 * rotates from outside them): every process polls the key table's version
 * every KEY_POLL_MS and reloads when it changed, so a new key is in every
 * JWKS within about a second. The rule that makes that safe: a key signs
 * only from its `createdAt` plus PUBLISH_DELAY_MS (twice the poll), and the
 * keys it replaces are retired at that same moment, signing until then. So a
 * token is never signed with a key a process does not publish yet; a first
 * key (nothing to replace) signs at once.
 */
export const KEY_POLL_MS = 1000;
export const PUBLISH_DELAY_MS = 2 * KEY_POLL_MS;

/** The algorithms the ring holds a key for, each with an active key: ES256 signs everything, RS256 only ID tokens that ask for it. */
export const RING_ALGORITHMS: readonly IdTokenAlg[] = ['ES256', 'RS256'];

/** A P-256 key for ES256, or a 2048-bit RSA key for RS256 (RFC 7518 §3.3 asks for at least 2048 bits). */
export function generateSigningKey(now: number, alg: IdTokenAlg = 'ES256'): SigningKey {
  const { privateKey, publicKey } = alg === 'RS256'
    ? generateKeyPairSync('rsa', { modulusLength: 2048 })
    : generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const kid = thumbprint(jwk);
  const material: Record<string, string> = alg === 'RS256' ? { kty: 'RSA', n: jwk.n!, e: jwk.e! } : { kty: jwk.kty!, crv: jwk.crv!, x: jwk.x!, y: jwk.y! };
  return {
    kid,
    alg,
    privateKeyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    publicJwk: { ...material, kid, alg, use: 'sig' },
    createdAt: now,
    retiredAt: null,
    expiresAt: null,
  };
}

/**
 * Whether tokens are signed on libuv's thread pool (`KeyRing.signAsync`): when
 * the `serve` runs fewer workers than there are cores, so the pool's threads
 * have a core to run on.
 */
export const signOffload = (workers: number, cores = availableParallelism()): boolean => workers < cores;

interface LoadedKey {
  key: SigningKey;
  publicKey: KeyObject;
}

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
 * The signing keys: one active key per algorithm signs (ES256 for every
 * token, RS256 for the ID tokens of clients registered for it), retired keys
 * stay published (and verifiable) until the tokens they signed have expired. Several processes
 * share the key table, so the ring reloads it periodically and whenever it
 * meets a `kid` it does not know (a rotation done by another process).
 */
export class KeyRing {
  private keys = new Map<string, LoadedKey>();
  /** The signing key of each algorithm, parsed once, and its encoded JOSE header per `typ`. */
  private active = new Map<IdTokenAlg, ActiveKey>();
  private loadedAt = 0;
  private reloading: Promise<void> | undefined;
  /** The unexpired rows as last loaded, and when the choice of signing keys among them changes next. */
  private rows: SigningKey[] = [];
  private switchAt = Infinity;
  private watcher: ReturnType<typeof setInterval> | undefined;
  private version: string | undefined;
  private polling = false;
  /** Per verification options (typ, issuer, audience): token → claims it verified to. */
  private readonly verified = new Map<string, Map<string, Verified>>();

  constructor(
    private readonly store: KeyStore,
    private readonly clock: Clock,
    private readonly opts: { reloadEveryMs?: number; /** `signAsync` signs on libuv's thread pool (see there). */ offload?: boolean } = {},
  ) {}

  /** Loads keys, creating the first one of each algorithm on first start (an RSA key too when upgrading a ring that had only ES256). */
  async init(): Promise<void> {
    this.version = await this.store.version?.();
    await this.reload();
    const missing = RING_ALGORITHMS.filter((alg) => !this.active.has(alg));
    if (missing.length) {
      for (const alg of missing) await this.store.add(generateSigningKey(this.clock.now(), alg));
      await this.reload();
    }
  }

  /**
   * `gatehouse keys rotate`: a new key of each algorithm signs from now on;
   * old ones stay published until `keepOldUntil`. Returns the ES256 key (the
   * one access tokens are signed with); `rotated` lists them all.
   */
  async rotate(keepOldUntil: number): Promise<SigningKey & { rotated: SigningKey[] }> {
    const now = this.clock.now();
    const rotated = RING_ALGORITHMS.map((alg) => generateSigningKey(now, alg));
    for (const key of rotated) await this.store.add(key);
    // Published now (here at once, elsewhere within KEY_POLL_MS); the old keys sign until the new ones take over.
    await this.store.retireOthers(rotated.map((k) => k.kid), now + PUBLISH_DELAY_MS, keepOldUntil);
    await this.reload();
    return { ...rotated[0]!, rotated };
  }

  private async reload(): Promise<void> {
    this.reloading ??= (async () => {
      try {
        const now = this.clock.now();
        const rows = (await this.store.list()).filter((k) => k.expiresAt === null || k.expiresAt > now);
        const next = new Map<string, LoadedKey>();
        for (const key of rows) {
          const existing = this.keys.get(key.kid);
          next.set(key.kid, existing ? { ...existing, key } : { key, publicKey: createPublicKey({ key: key.publicJwk, format: 'jwk' }) });
        }
        this.keys = next;
        this.rows = rows;
        this.selectActive(now);
        this.loadedAt = now;
      } finally {
        this.reloading = undefined;
      }
    })();
    return this.reloading;
  }

  /**
   * The signing key of each algorithm at `now`: among the keys not yet
   * retired, the newest that has been published for PUBLISH_DELAY_MS, else
   * the longest published (a first key); and when that choice changes next.
   */
  private selectActive(now: number): void {
    const active = new Map<IdTokenAlg, ActiveKey>();
    let switchAt = Infinity;
    for (const alg of RING_ALGORITHMS) {
      const candidates = this.rows.filter((k) => k.alg === alg && (k.retiredAt === null || k.retiredAt > now)).sort((a, b) => b.createdAt - a.createdAt);
      for (const k of candidates) {
        if (k.createdAt + PUBLISH_DELAY_MS > now) switchAt = Math.min(switchAt, k.createdAt + PUBLISH_DELAY_MS);
        if (k.retiredAt !== null) switchAt = Math.min(switchAt, k.retiredAt);
      }
      const chosen = candidates.find((k) => k.createdAt + PUBLISH_DELAY_MS <= now) ?? candidates.at(-1);
      if (!chosen) continue;
      const current = this.active.get(alg);
      if (current?.kid === chosen.kid) {
        active.set(alg, current);
        continue;
      }
      const privateKey = createPrivateKey(chosen.privateKeyPem);
      active.set(alg, { kid: chosen.kid, signKey: alg === 'ES256' ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey, headers: new Map() });
    }
    this.active = active;
    this.switchAt = switchAt;
  }

  /**
   * Polls the key table's version every KEY_POLL_MS and reloads when it
   * changed: a rotation made by another process (or `gatehouse keys rotate`,
   * outside the cluster) is published here within about a second. One small
   * aggregate query per second per process; `close` stops it.
   */
  watch(): void {
    const version = this.store.version?.bind(this.store);
    if (this.watcher || !version) return;
    this.watcher = setInterval(() => {
      if (this.polling) return;
      this.polling = true;
      void version()
        .then(async (v) => {
          if (v === this.version) return;
          this.version = v;
          await this.reload();
        })
        .catch(() => {})
        .finally(() => (this.polling = false));
    }, KEY_POLL_MS);
    this.watcher.unref();
  }

  close(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
  }

  /** Picks up rotations made by other processes; cheap when nothing is due. */
  maybeReload(): void {
    if (this.clock.now() - this.loadedAt > (this.opts.reloadEveryMs ?? 60_000)) void this.reload().catch(() => {});
  }

  /**
   * Signs a JWS (RFC 7515 compact form) synchronously with node:crypto and a
   * key parsed once. ES256 signatures are R||S, not DER (RFC 7518 §3.4);
   * RS256 is RSASSA-PKCS1-v1_5 with SHA-256 (§3.3), node's default for an RSA
   * key. A payload without `iat` gets the current time.
   */
  sign(payload: Record<string, unknown>, typ: string, alg: IdTokenAlg = 'ES256'): string {
    const { input, key } = this.signingInput(payload, typ, alg);
    return `${input}.${cryptoSign('sha256', Buffer.from(input), key).toString('base64url')}`;
  }

  /**
   * The same JWS as `sign`, byte for byte, for the token endpoint's hot
   * paths. With `offload` the signature is computed on libuv's thread pool
   * (node:crypto's callback form), so a process that has a core to spare
   * (GATEHOUSE_WORKERS below the core count) signs on it: an ES256 signature
   * costs the event loop about 40 µs inline, under 6 µs dispatched. Without
   * it (every core already runs a worker) the dispatch would only add its
   * cost, so it signs inline.
   */
  signAsync(payload: Record<string, unknown>, typ: string, alg: IdTokenAlg = 'ES256'): Promise<string> {
    if (!this.opts.offload) return Promise.resolve(this.sign(payload, typ, alg));
    const { input, key } = this.signingInput(payload, typ, alg);
    return new Promise((resolve, reject) => {
      cryptoSign('sha256', Buffer.from(input), key, (err, signature) => (err ? reject(err) : resolve(`${input}.${signature.toString('base64url')}`)));
    });
  }

  /** The JWS signing input (RFC 7515 §5.1 step 6; the header encoded once per key and `typ`) and the key to sign it with. */
  private signingInput(payload: Record<string, unknown>, typ: string, alg: IdTokenAlg): { input: string; key: SignKey } {
    this.maybeReload();
    // A rotated-in key takes over (and the old one retires) at a moment known in advance: no query needed.
    if (this.clock.now() >= this.switchAt) this.selectActive(this.clock.now());
    const active = this.active.get(alg);
    if (!active) throw new Error(`no active ${alg} signing key`);
    let header = active.headers.get(typ);
    if (!header) {
      header = base64url(JSON.stringify({ alg, typ, kid: active.kid }));
      active.headers.set(typ, header);
    }
    const claims = payload.iat === undefined ? { ...payload, iat: Math.floor(this.clock.now() / 1000) } : payload;
    return { input: `${header}.${base64url(JSON.stringify(claims))}`, key: active.signKey };
  }

  /** The key signing access tokens (ES256). */
  get activeKid(): string | undefined {
    return this.active.get('ES256')?.kid;
  }

  /** RFC 7517 JWK Set of every key still published. */
  jwks(): { keys: Record<string, string>[] } {
    this.maybeReload();
    return { keys: [...this.keys.values()].map((k) => k.key.publicJwk) };
  }

  /**
   * Verifies signature, `typ`, `iss`, `exp` (RFC 9068 §4) with the one JWT
   * verifier and Gatehouse's own algorithms. Returns the claims, or undefined
   * for any failure.
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
    let verified;
    try {
      verified = await verifyJwt(token, {
        keys: (header) => this.publicKey(header.kid),
        issuer: opts.issuer,
        ...(opts.audience ? { audience: opts.audience } : {}),
        typ: opts.typ,
        algorithms: GATEHOUSE_ALGORITHMS,
        requiredClaims: ['exp', 'iat', 'jti'],
        now,
      });
    } catch {
      return undefined;
    }
    const { claims, header } = verified;
    if (!seen) this.verified.set(cacheKey, (seen = new Map()));
    // Bounded: the oldest entry goes first (a Map iterates in insertion order).
    if (seen.size >= VERIFIED_MAX) seen.delete(seen.keys().next().value!);
    seen.set(token, { claims, kid: header.kid!, until: now + VERIFIED_TTL_MS });
    return claims;
  }

  /**
   * A published key by id, with its algorithm (a key is only ever used with
   * the one it was made for, RFC 7517 §4.4); an unknown id may be a key
   * rotated in by another process: reload once.
   */
  async publicKey(kid: string | undefined): Promise<{ key: KeyObject; alg: string } | undefined> {
    if (typeof kid !== 'string') return undefined;
    if (!this.keys.has(kid)) await this.reload();
    const loaded = this.keys.get(kid);
    return loaded && { key: loaded.publicKey, alg: loaded.key.alg };
  }
}
