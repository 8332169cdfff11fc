import { createHash, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import type autocannon from 'autocannon';
import type { Load } from './load.js';

/**
 * DPoP proofs (RFC 9449 §4.2) made per request by the load generator: each
 * needs a new `jti` and a current `iat`, so none can be made beforehand.
 * Signed with node:crypto, synchronously, in autocannon's `setupRequest`.
 */
export class ProofMaker {
  private readonly key: KeyObject;
  private readonly header: string;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.key = privateKey;
    const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
    this.header = Buffer.from(JSON.stringify({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty, crv, x, y } })).toString('base64url');
  }

  proof(htm: string, htu: string, token?: string): string {
    const claims: Record<string, unknown> = { jti: randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000) };
    if (token) claims.ath = createHash('sha256').update(token).digest('base64url');
    const input = `${this.header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: this.key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  }
}

/** One request shape sent with a fresh proof each time. */
export function withProofs(load: Load & { method: 'GET' | 'POST' }, path: string, htu: string, proofs: ProofMaker, token?: string): Load {
  const request: autocannon.Request = {
    method: load.method,
    path,
    ...(load.body !== undefined ? { body: load.body } : {}),
    setupRequest: (req) => ({ ...req, headers: { ...load.headers, dpop: proofs.proof(load.method, htu, token) } }),
  };
  return { ...load, requests: [request] };
}
