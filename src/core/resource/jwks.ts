import { createPublicKey, type KeyObject } from 'node:crypto';
import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { unavailable } from './errors.js';

export interface PublicKey {
  kid: string;
  /** The JWK's `alg`, when it names one: the key may then only be used with it. */
  alg: string | undefined;
  kty: string;
  crv: string | undefined;
  key: KeyObject;
}

/** Where verification keys come from. */
export interface KeySource {
  /** The key with this id, refreshing once if it is unknown; undefined if there is none. */
  get(kid: string): Promise<PublicKey | undefined>;
}

/** A JWK Set larger than this is not one we can use. */
const JWKS_MAX_BYTES = 512 * 1024;

export interface RemoteJwksOptions {
  /** The authorization server's `jwks_uri`. */
  uri: string;
  /** The server-side HTTP client (src/infra/outbound/). */
  http: OutboundHttp;
  clock: Clock;
  /** How long a fetched set is used before it is fetched again (in the background). */
  ttlMs?: number;
  /**
   * Least time between two fetches caused by unknown `kid`s, so tokens with
   * made-up key ids cannot turn the resource server into a flood of JWKS
   * requests.
   */
  cooldownMs?: number;
  timeoutMs?: number;
}

/**
 * The authorization server's JWK Set (RFC 7517), fetched over HTTP and
 * cached. A `kid` not in the cache triggers one refresh (a key rotated in
 * since the last fetch); keys rotated out disappear only when the server
 * stops publishing them, i.e. once the tokens they signed have expired.
 */
export class RemoteJwks implements KeySource {
  private keys = new Map<string, PublicKey>();
  private fetchedAt: number | undefined;
  private lastAttempt = -Infinity;
  private inflight: Promise<void> | undefined;

  constructor(private readonly opts: RemoteJwksOptions) {}

  async get(kid: string): Promise<PublicKey | undefined> {
    const now = this.opts.clock.now();
    if (this.fetchedAt === undefined) {
      // Never fetched: try now, but not more often than the cooldown while the server is down.
      if (now - this.lastAttempt < (this.opts.cooldownMs ?? 1000) && !this.inflight) throw unavailable('the signing keys of the authorization server could not be fetched');
      await this.refresh();
    } else if (now - this.fetchedAt > (this.opts.ttlMs ?? 300_000)) {
      // Stale: refresh in the background and go on with what we have.
      void this.refresh().catch(() => {});
    }
    const key = this.keys.get(kid);
    if (key) return key;
    if (now - this.lastAttempt < (this.opts.cooldownMs ?? 1000)) return undefined;
    await this.refresh().catch(() => {});
    return this.keys.get(kid);
  }

  private refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async load(): Promise<void> {
    this.lastAttempt = this.opts.clock.now();
    let body: unknown;
    try {
      const res = await this.opts.http({ url: this.opts.uri, headers: { accept: 'application/json' }, timeoutMs: this.opts.timeoutMs ?? 5000, maxBytes: JWKS_MAX_BYTES });
      if (res.status !== 200 || res.truncated) throw new Error(`HTTP ${res.status}`);
      body = JSON.parse(res.body);
    } catch {
      // With keys in hand we keep using them; without any, nothing can be verified.
      if (this.fetchedAt === undefined) throw unavailable('the signing keys of the authorization server could not be fetched');
      return;
    }
    const next = new Map<string, PublicKey>();
    const list = (body as { keys?: unknown })?.keys;
    for (const jwk of Array.isArray(list) ? list : []) {
      const k = toPublicKey(jwk);
      if (k) next.set(k.kid, k);
    }
    this.keys = next;
    this.fetchedAt = this.opts.clock.now();
  }
}

/** Signing keys only (RFC 7517 §4.2 `use`), with a `kid`; anything unusable is skipped. */
function toPublicKey(jwk: unknown): PublicKey | undefined {
  if (!jwk || typeof jwk !== 'object') return undefined;
  const j = jwk as Record<string, unknown>;
  if (typeof j.kid !== 'string' || typeof j.kty !== 'string') return undefined;
  if (j.use !== undefined && j.use !== 'sig') return undefined;
  if ('d' in j) return undefined; // never accept a private key as published material
  try {
    const key = createPublicKey({ key: j as import('node:crypto').JsonWebKey, format: 'jwk' });
    return { kid: j.kid, alg: typeof j.alg === 'string' ? j.alg : undefined, kty: j.kty, crv: typeof j.crv === 'string' ? j.crv : undefined, key };
  } catch {
    return undefined;
  }
}
