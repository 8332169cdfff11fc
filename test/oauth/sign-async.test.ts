import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { KeyRing, signOffload } from '../../src/core/oauth/keys.js';
import type { KeyStore } from '../../src/core/ports.js';
import type { IdTokenAlg, SigningKey } from '../../src/core/model.js';
import { TestClock } from '../helpers/clock.js';

/** Keys in memory: the ring's signing needs nothing else. */
function memoryKeys(): KeyStore {
  const keys: SigningKey[] = [];
  return {
    list: async () => keys.map((k) => ({ ...k })),
    add: async (k) => void keys.push(k),
    retireOthers: async () => {},
    deleteExpired: async () => 0,
  };
}

const part = (token: string, i: number) => JSON.parse(Buffer.from(token.split('.')[i]!, 'base64url').toString()) as Record<string, unknown>;

/** Verifies a compact JWS against the ring's published key, with the JOSE signature form (R||S for ES256, RFC 7518 §3.4). */
function verifies(ring: KeyRing, token: string, alg: IdTokenAlg): boolean {
  const [h, p, s] = token.split('.') as [string, string, string];
  const jwk = ring.jwks().keys.find((k) => k.kid === part(token, 0).kid && k.alg === alg)!;
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  return verify('sha256', Buffer.from(`${h}.${p}`), alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key, Buffer.from(s, 'base64url'));
}

describe('signing on the thread pool (KeyRing.signAsync)', () => {
  for (const offload of [true, false]) {
    it(`gives the JWS sign gives, ES256 and RS256 (offload ${offload})`, async () => {
      const clock = new TestClock();
      const ring = new KeyRing(memoryKeys(), clock, { offload });
      await ring.init();
      for (const alg of ['ES256', 'RS256'] as const) {
        const claims = { iss: 'https://as.example', sub: 'u1', jti: 'j1', exp: 2_000_000_000 };
        const inline = ring.sign(claims, 'at+jwt', alg);
        const pooled = await ring.signAsync(claims, 'at+jwt', alg);
        // Header and payload byte for byte (ECDSA signatures are randomised, so those are verified instead).
        assert.equal(pooled.split('.').slice(0, 2).join('.'), inline.split('.').slice(0, 2).join('.'));
        assert.deepEqual(part(pooled, 0), { alg, typ: 'at+jwt', kid: part(inline, 0).kid });
        assert.equal(part(pooled, 1).iat, Math.floor(clock.now() / 1000), 'iat added when absent');
        assert.equal(Buffer.from(pooled.split('.')[2]!, 'base64url').length, alg === 'ES256' ? 64 : 256, 'ES256 is R||S, not DER');
        assert.ok(verifies(ring, pooled, alg));
        assert.ok(verifies(ring, inline, alg));
        // And the ring's own verifier (access tokens: ES256 only) accepts it.
        if (alg === 'ES256') assert.equal((await ring.verify(pooled, { typ: 'at+jwt', issuer: 'https://as.example' }))?.sub, 'u1');
      }
    });
  }

  it('many concurrent signatures each sign their own claims', async () => {
    const ring = new KeyRing(memoryKeys(), new TestClock(), { offload: true });
    await ring.init();
    const tokens = await Promise.all(Array.from({ length: 64 }, (_, i) => ring.signAsync({ jti: `j${i}`, iat: 1, exp: 2 }, 'JWT')));
    tokens.forEach((t, i) => {
      assert.equal(part(t, 1).jti, `j${i}`);
      assert.ok(verifies(ring, t, 'ES256'));
    });
  });

  it('offloads only while a core has no worker of its own', () => {
    assert.equal(signOffload(1, 2), true);
    assert.equal(signOffload(2, 2), false);
    assert.equal(signOffload(4, 2), false);
    assert.equal(signOffload(1, 1), false);
  });
});
