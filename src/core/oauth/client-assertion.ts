import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import type { JWTHeaderParameters } from 'jose';
import { decodeJwt } from 'jose';
import { sha256 } from '../crypto.js';
import { ACCEPTED_ALGORITHMS, HMAC_ALGORITHMS, JwtRejected, verifyJwt, type VerificationKey } from '../jwt-verify.js';
import type { Client } from '../model.js';
import type { OutboundHttp } from '../outbound.js';
import type { Clock } from '../ports.js';
import { RemoteJwks } from '../resource/jwks.js';

/**
 * JWT client authentication (RFC 7523 §2.2, OpenID Connect Core §9): with
 * `private_key_jwt` the client signs a short-lived assertion with a key whose
 * public half it registered (`jwks`) or publishes (`jwks_uri`); with
 * `client_secret_jwt` it MACs it with its client secret.
 */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** `jti`s seen, each until its assertion expires: the first `remember` of a key wins, across processes. */
export interface ReplayStore {
  remember(key: string, expiresAt: number, now: number): Promise<boolean>;
}

/** An assertion may not live longer than this (its `jti` is kept that long). */
const MAX_LIFETIME_MS = 10 * 60_000;
/** Clock skew allowed for `exp` and `nbf`. */
const SKEW_SECONDS = 30;
const REMOTE_SETS_MAX = 1_000;

/** The unverified `sub` (= `iss` = client_id) of an assertion: which client's keys to check it with. */
export function assertionSubject(assertion: string): string | undefined {
  try {
    const { sub, iss } = decodeJwt(assertion);
    return typeof sub === 'string' && sub === iss && sub.length <= 200 ? sub : undefined;
  } catch {
    return undefined;
  }
}

/** Public signing keys of a registered JWK Set, by `kid`; undefined when it is not one (RFC 7517 §5). */
export function parseJwks(text: string): Map<string, VerificationKey> | string {
  let set: unknown;
  try {
    set = JSON.parse(text);
  } catch {
    return 'jwks must be a JSON JWK Set';
  }
  const keys = (set as { keys?: unknown })?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 20) return 'jwks must be a JWK Set with 1 to 20 keys';
  const out = new Map<string, VerificationKey>();
  for (const [i, jwk] of keys.entries()) {
    if (!jwk || typeof jwk !== 'object' || Array.isArray(jwk)) return `jwks key ${i} is not a JWK`;
    const j = jwk as Record<string, unknown>;
    if ('d' in j || 'k' in j) return `jwks key ${i} holds private or symmetric material: register public keys only`;
    if (j.use !== undefined && j.use !== 'sig') return `jwks key ${i} is not a signing key`;
    if (j.alg !== undefined && (typeof j.alg !== 'string' || !ACCEPTED_ALGORITHMS.includes(j.alg))) return `jwks key ${i} names an algorithm not accepted (${ACCEPTED_ALGORITHMS.join(', ')})`;
    let key: KeyObject;
    try {
      key = createPublicKey({ key: j as import('node:crypto').JsonWebKey, format: 'jwk' });
    } catch {
      return `jwks key ${i} is not a valid public key`;
    }
    const kid = typeof j.kid === 'string' ? j.kid : '';
    if (out.has(kid)) return 'jwks keys need distinct kid values';
    out.set(kid, { key, alg: j.alg as string | undefined });
  }
  return out;
}

export interface ClientAssertionDeps {
  replay: ReplayStore;
  clock: Clock;
  /** The client-registered destinations' outbound client (src/infra/outbound/): `jwks_uri` is the client's choice. */
  http: OutboundHttp;
  /** What `aud` may name (RFC 7523 §3 item 3): the issuer and the endpoints that take client authentication. */
  audiences: () => readonly string[];
}

export class ClientAssertions {
  private readonly inline = new Map<string, Map<string, VerificationKey>>();
  private readonly remote = new Map<string, RemoteJwks>();

  constructor(private readonly deps: ClientAssertionDeps) {}

  /**
   * RFC 7523 §3: signature by one of the client's keys with an accepted
   * (asymmetric) algorithm, `iss` = `sub` = client_id, `aud` naming us, `exp`
   * present and near, and a `jti` never seen before (stored until `exp`).
   * False for any failure; an unreachable `jwks_uri` is a failure too.
   */
  async verify(client: Client, assertion: string): Promise<boolean> {
    const now = this.deps.clock.now();
    let claims: Record<string, unknown>;
    try {
      // client_secret_jwt: HMAC keyed with the octets of the client's secret (OpenID Connect Core §9), and nothing else.
      const shared = client.authMethod === 'client_secret_jwt';
      ({ claims } = await verifyJwt(assertion, {
        keys: (header) => (shared ? this.secretKey(client) : this.key(client, header)), issuer: client.id, audience: this.deps.audiences(),
        algorithms: shared ? HMAC_ALGORITHMS : ACCEPTED_ALGORITHMS, hmac: shared, requiredClaims: ['sub', 'exp', 'jti'], clockTolerance: SKEW_SECONDS, now,
      }));
    } catch (e) {
      if (e instanceof JwtRejected) return false;
      throw e;
    }
    const exp = claims.exp as number;
    if (claims.sub !== client.id || exp * 1000 > now + MAX_LIFETIME_MS) return false;
    if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > 512) return false;
    return this.deps.replay.remember(`client_assertion:${client.id}:${sha256(claims.jti)}`, exp * 1000 + SKEW_SECONDS * 1000, now);
  }

  private secretKey(client: Client): VerificationKey | undefined {
    return client.jwtSecret ? { key: createSecretKey(Buffer.from(client.jwtSecret, 'utf8')) } : undefined;
  }

  /** The client's public key a JWT header names: `private_key_jwt` assertions and signed request objects (RFC 9101) alike. */
  async key(client: Client, header: JWTHeaderParameters): Promise<VerificationKey | undefined> {
    if (client.jwks) {
      let set = this.inline.get(client.jwks);
      if (!set) {
        const parsed = parseJwks(client.jwks);
        if (typeof parsed === 'string') return undefined;
        if (this.inline.size >= REMOTE_SETS_MAX) this.inline.clear();
        this.inline.set(client.jwks, (set = parsed));
      }
      // Without a kid, a set of one key names it.
      return header.kid !== undefined ? set.get(header.kid) : set.size === 1 ? [...set.values()][0] : undefined;
    }
    if (!client.jwksUri || typeof header.kid !== 'string') return undefined;
    let source = this.remote.get(client.jwksUri);
    if (!source) {
      if (this.remote.size >= REMOTE_SETS_MAX) this.remote.clear();
      // Cached; an unknown kid refetches at most once a second (RemoteJwks).
      source = new RemoteJwks({ uri: client.jwksUri, http: this.deps.http, clock: this.deps.clock });
      this.remote.set(client.jwksUri, source);
    }
    try {
      const k = await source.get(header.kid);
      return k && { key: k.key, alg: k.alg };
    } catch {
      // The client's key source could not be reached: its assertion cannot be checked.
      return undefined;
    }
  }
}
