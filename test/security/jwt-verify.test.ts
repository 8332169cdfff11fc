/**
 * One JWT verifier (src/core/jwt-verify.ts) behind every place Gatehouse
 * accepts a JWT: introspection and the token table (`KeyRing.verify`), the
 * resource server's local check (`JwtVerifier`), logout hints
 * (`verifyIdTokenHint`) and providers' ID tokens (`IdTokenVerifier`). The same
 * forgeries (RFC 8725 §2, §3) must fail on all four; before, four hand-written
 * paths each checked a different subset (the logout hint ignored `crit`).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, createPrivateKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { SigningKey } from '../../src/core/model.js';
import type { KeyStore } from '../../src/core/ports.js';
import type { OutboundHttp } from '../../src/core/outbound.js';
import { KeyRing } from '../../src/core/oauth/keys.js';
import { verifyIdTokenHint } from '../../src/core/oidc/end-session.js';
import { IdTokenVerifier } from '../../src/core/federation/id-token.js';
import { JwtVerifier } from '../../src/core/resource/jwt.js';
import { ACCEPTED_ALGORITHMS } from '../../src/core/jwt-verify.js';
import { TestClock } from '../helpers/clock.js';

const ISSUER = 'https://auth.example.test';
const API = 'https://api.example.test';
const CLIENT = 'client-1';
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

class MemoryKeys implements KeyStore {
  keys: SigningKey[] = [];
  list = async () => this.keys;
  add = async (k: SigningKey) => void this.keys.push(k);
  retireOthers = async () => {};
  deleteExpired = async () => 0;
}

/** A path that accepts JWTs: true when it takes the token. */
type Path = { name: string; typ: string; claims: (now: number) => Record<string, unknown>; accepts: (token: string) => Promise<boolean> };

describe('one JWT verifier behind every JWT Gatehouse accepts', () => {
  const clock = new TestClock();
  const store = new MemoryKeys();
  const ring = new KeyRing(store, clock);
  let signingKey: SigningKey;
  let paths: Path[];

  /** Signs header and claims as given with the ring's real private key (ES256, R||S). */
  const signed = (header: Record<string, unknown>, claims: Record<string, unknown>) => {
    const input = `${b64(header)}.${b64(claims)}`;
    const sig = sign('sha256', Buffer.from(input), { key: createPrivateKey(signingKey.privateKeyPem), dsaEncoding: 'ieee-p1363' });
    return `${input}.${sig.toString('base64url')}`;
  };

  before(async () => {
    await ring.init();
    signingKey = store.keys[0]!;
    const jwks = ring.jwks();
    const http: OutboundHttp = async () => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(jwks), truncated: false });
    const published = async (kid: string) => {
      const k = await ring.publicKey(kid);
      return k && { kid, alg: 'ES256', kty: 'EC', crv: 'P-256', key: k.key };
    };
    const resource = new JwtVerifier({ keys: { get: published }, issuer: ISSUER, audience: [API], clock });
    const federation = new IdTokenVerifier({ http, clock });
    const access = (n: number) => ({ iss: ISSUER, sub: 'user-1', aud: API, client_id: CLIENT, scope: 'user', iat: n, exp: n + 600, jti: randomUUID() });
    const idToken = (n: number) => ({ iss: ISSUER, sub: 'user-1', aud: CLIENT, iat: n, exp: n + 600, nonce: 'n-1' });
    const ok = (p: Promise<unknown>) => p.then((v) => v !== undefined, () => false);
    paths = [
      { name: 'KeyRing.verify (introspection, token table)', typ: 'at+jwt', claims: access, accepts: (t) => ok(ring.verify(t, { typ: 'at+jwt', issuer: ISSUER })) },
      { name: 'JwtVerifier (resource server, local)', typ: 'at+jwt', claims: access, accepts: (t) => ok(resource.verify(t)) },
      { name: 'verifyIdTokenHint (logout)', typ: 'JWT', claims: idToken, accepts: (t) => ok(verifyIdTokenHint(ring, ISSUER, t, clock.now())) },
      {
        name: 'IdTokenVerifier (federated sign-in)', typ: 'JWT', claims: idToken,
        accepts: (t) => ok(federation.verify(t, { issuer: ISSUER, clientId: CLIENT, jwksUri: `${ISSUER}/jwks`, nonce: 'n-1' })),
      },
    ];
  });

  it('the control: a well-formed token signed by the published key is accepted on every path', async () => {
    for (const p of paths) {
      const header = { alg: 'ES256', typ: p.typ, kid: signingKey.kid };
      assert.equal(await p.accepts(signed(header, p.claims(Math.floor(clock.now() / 1000)))), true, p.name);
    }
  });

  const forgeries: [name: string, make: (header: Record<string, unknown>, claims: Record<string, unknown>) => string][] = [
    ['alg none, unsigned', (h, c) => `${b64({ ...h, alg: 'none' })}.${b64(c)}.`],
    ['HS256 keyed with the public JWK', (h, c) => {
      const input = `${b64({ ...h, alg: 'HS256' })}.${b64(c)}`;
      return `${input}.${createHmac('sha256', JSON.stringify(signingKey.publicJwk)).update(input).digest('base64url')}`;
    }],
    ['a flipped signature bit', (h, c) => {
      const [x, y, s] = signed(h, c).split('.') as [string, string, string];
      const raw = Buffer.from(s, 'base64url');
      raw.writeUInt8(raw.readUInt8(5) ^ 1, 5);
      return `${x}.${y}.${raw.toString('base64url')}`;
    }],
    ['claims changed after signing', (h, c) => {
      const [x, , s] = signed(h, c).split('.') as [string, string, string];
      return `${x}.${b64({ ...c, sub: 'admin' })}.${s}`;
    }],
    ['an unknown kid', (h, c) => signed({ ...h, kid: 'no-such-key' }, c)],
    ['no kid', (h, c) => { const { kid: _, ...rest } = h; return signed(rest, c); }],
    ['an unknown critical header (RFC 7515 §4.1.11)', (h, c) => signed({ ...h, crit: ['x-policy'], 'x-policy': 1 }, c)],
    ['ES384 named over a P-256 key', (h, c) => signed({ ...h, alg: 'ES384' }, c)],
    ['RS256 named over an EC key', (h, c) => signed({ ...h, alg: 'RS256' }, c)],
    ['another issuer', (h, c) => signed(h, { ...c, iss: 'https://evil.example' })],
    ['not valid yet (nbf)', (h, c) => signed(h, { ...c, nbf: (c.iat as number) + 3600 })],
    ['a DER-encoded signature', (h, c) => {
      const input = `${b64(h)}.${b64(c)}`;
      return `${input}.${sign('sha256', Buffer.from(input), createPrivateKey(signingKey.privateKeyPem)).toString('base64url')}`;
    }],
    ['another key of the same kind under our kid', (h, c) => {
      const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
      const input = `${b64(h)}.${b64(c)}`;
      return `${input}.${sign('sha256', Buffer.from(input), { key: other, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    }],
    ['a claims set that is not an object', (h) => signed(h, ['sub'] as unknown as Record<string, unknown>)],
    ['oversized (over 16 KiB)', (h, c) => signed(h, { ...c, pad: 'x'.repeat(20_000) })],
  ];

  for (const [name, make] of forgeries) {
    it(`refuses ${name} on every path`, async () => {
      for (const p of paths) {
        const header = { alg: 'ES256', typ: p.typ, kid: signingKey.kid };
        assert.equal(await p.accepts(make(header, p.claims(Math.floor(clock.now() / 1000)))), false, p.name);
      }
    });
  }

  it('refuses an expired token everywhere but the logout hint, which RP-Initiated Logout 1.0 §2 lets expire', async () => {
    const longAgo = Math.floor(clock.now() / 1000) - 7200;
    for (const p of paths) {
      const token = signed({ alg: 'ES256', typ: p.typ, kid: signingKey.kid }, p.claims(longAgo));
      assert.equal(await p.accepts(token), p.name.startsWith('verifyIdTokenHint'), p.name);
    }
  });

  it('accepts only asymmetric algorithms, whoever configures it', () => {
    assert.deepEqual(ACCEPTED_ALGORITHMS.filter((a) => a === 'none' || a.startsWith('HS')), []);
  });
});
