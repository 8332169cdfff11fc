import { sha256 } from '../crypto.js';
import { GatehouseError } from '../errors.js';
import type { Clock } from '../ports.js';
import type { AccessTokenVerifier, VerifiedToken } from './token.js';

type Entry = { ok: true; token: VerifiedToken; until: number } | { ok: false; error: GatehouseError; until: number };

/**
 * Remembers what a verifier said about a token for a short time (RFC 7662 §4
 * allows caching introspection responses; a shorter time means revocation is
 * seen sooner). Keys are token hashes, so no usable token sits in memory.
 * Answers for a token never outlive its expiry; only `invalid_token`
 * failures are remembered, never an unreachable server. Concurrent misses for
 * one token share one call.
 */
export class CachedVerifier implements AccessTokenVerifier {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<VerifiedToken>>();

  constructor(
    private readonly inner: AccessTokenVerifier,
    /**
     * `cacheFailures: false` for local JWT checks: a failure there may be a key
     * not fetched yet, and remembering it would refuse a good token for the
     * whole lifetime.
     */
    private readonly opts: { ttlMs: number; clock: Clock; maxEntries?: number; cacheFailures?: boolean },
  ) {}

  async verify(token: string): Promise<VerifiedToken> {
    if (this.opts.ttlMs <= 0) return this.inner.verify(token);
    const key = sha256(token);
    const now = this.opts.clock.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) {
      if (hit.ok) return hit.token;
      throw hit.error;
    }
    if (hit) this.entries.delete(key);
    let call = this.pending.get(key);
    if (!call) {
      call = this.fill(key, token).finally(() => this.pending.delete(key));
      this.pending.set(key, call);
    }
    return call;
  }

  private async fill(key: string, token: string): Promise<VerifiedToken> {
    const until = () => this.opts.clock.now() + this.opts.ttlMs;
    try {
      const verified = await this.inner.verify(token);
      this.put(key, { ok: true, token: verified, until: Math.min(until(), verified.expiresAt) });
      return verified;
    } catch (e) {
      if (this.opts.cacheFailures !== false && e instanceof GatehouseError && e.code === 'invalid_token') this.put(key, { ok: false, error: e, until: until() });
      throw e;
    }
  }

  private put(key: string, entry: Entry): void {
    // Oldest first out: a Map iterates in insertion order.
    if (this.entries.size >= (this.opts.maxEntries ?? 10_000)) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }

  /** Forgets everything (tests, or after an emergency key removal). */
  clear(): void {
    this.entries.clear();
  }
}

/** Sends JWT-shaped tokens to one verifier and everything else (opaque tokens) to another. */
export class TokenRouter implements AccessTokenVerifier {
  constructor(private readonly routes: { jwt: AccessTokenVerifier; opaque: AccessTokenVerifier }) {}

  verify(token: string): Promise<VerifiedToken> {
    return token.split('.').length === 3 ? this.routes.jwt.verify(token) : this.routes.opaque.verify(token);
  }
}
