import { createHash, randomUUID } from 'node:crypto';
import * as jose from 'jose';

/** DPoP keys and proofs made by hand (RFC 9449 §4.2), for the tests in test/oauth/dpop*.test.ts. */

type Pair = Awaited<ReturnType<typeof jose.generateKeyPair>>;

export interface DpopKey {
  privateKey: Pair['privateKey'];
  publicKey: Pair['publicKey'];
  jwk: jose.JWK;
  jkt: string;
  alg: string;
}

export async function dpopKey(alg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const jwk = await jose.exportJWK(publicKey);
  return { privateKey, publicKey, jwk, jkt: await jose.calculateJwkThumbprint(jwk, 'sha256'), alg };
}

export const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

/** A DPoP proof (§4.2), every claim and header member overridable. */
export async function proof(key: DpopKey, htm: string, htu: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  return new jose.SignJWT({ jti: randomUUID(), htm, htu, iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...header }).sign(key.privateKey);
}

