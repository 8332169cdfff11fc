import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { randomToken, sha256 } from '../../src/core/crypto.js';
import { newFamilyId, newToken, timePart, tokenKey } from '../../src/core/oauth/token-key.js';
import { OPAQUE_PREFIX, REFRESH_PREFIX } from '../../src/core/oauth/tokens.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { callUser, seed } from '../resource/support.js';

/** A token in the format issued before issue 16: the prefix and 32 random bytes, stored under their hash alone. */
const legacy = (prefix: string) => prefix + randomToken();

describe('token keys (src/core/oauth/token-key.ts)', () => {
  it('a new token carries its issue time before its secret; its key is that time and the hash of the whole token', () => {
    const now = Date.UTC(2026, 10, 25, 8, 0, 0, 123);
    for (const prefix of [OPAQUE_PREFIX, REFRESH_PREFIX]) {
      const token = newToken(prefix, now);
      assert.match(token, /^gh_(at|rt)_[0-9a-z]{9}[A-Za-z0-9_-]{43}$/);
      assert.equal(token.slice(6, 15), timePart(now));
      assert.equal(parseInt(token.slice(6, 15), 36), now);
      assert.equal(tokenKey(token), timePart(now) + sha256(token));
      assert.equal(tokenKey(token).length, 52);
      // The secret part is what the key hides: the key holds no part of it.
      assert.ok(!tokenKey(token).includes(token.slice(15)));
    }
  });

  it('keys grow with the issue time, byte-wise (SQLite BINARY, PostgreSQL "C") and in a locale collation', () => {
    const times = [0, 1, 35, 36, 999, Date.now() - 1, Date.now(), Date.now() + 1, 36 ** 8, 36 ** 9 - 1];
    const keys = times.map((t) => tokenKey(newToken(OPAQUE_PREFIX, t)));
    assert.deepEqual([...keys].sort(), keys);
    assert.deepEqual([...keys].sort((a, b) => a.localeCompare(b, 'en')), keys);
  });

  it('a time out of range is clamped to what 9 digits hold, and the token still finds its key', () => {
    for (const t of [-5, Number.NaN, Infinity, 36 ** 9, 1e20, 1.5]) {
      const token = newToken(REFRESH_PREFIX, t);
      assert.match(token.slice(6, 15), /^[0-9a-z]{9}$/);
      assert.equal(tokenKey(token), token.slice(6, 15) + sha256(token));
    }
  });

  it('a token of the former format keeps its key, the hash alone, and the two formats never share a key', () => {
    for (const prefix of [OPAQUE_PREFIX, REFRESH_PREFIX]) {
      const old = legacy(prefix);
      assert.equal(old.length, 49);
      assert.equal(tokenKey(old), sha256(old));
      assert.equal(tokenKey(old).length, 43);
    }
  });

  it('any other string gets a key without throwing: the hash alone, which matches no token', () => {
    const near = newToken(OPAQUE_PREFIX, Date.now());
    const odd = [
      '', 'gh_at_', 'gh_rt_', 'a.b.c', '\u0000', '\ud800', '𝒳'.repeat(40), 'x'.repeat(100_000),
      near.slice(0, -1), `${near}A`, near.replace(/^gh_at_/, 'GH_AT_'),
      // The time part in capitals or with a character outside base 36.
      near.slice(0, 6) + near.slice(6, 15).toUpperCase().replace(/[0-9]/g, 'Z') + near.slice(15),
      `${near.slice(0, 6)}-${near.slice(7)}`, `${near.slice(0, -1)}=`, `${near.slice(0, -1)}\u0000`,
    ];
    for (const s of odd) assert.equal(tokenKey(s), sha256(s), JSON.stringify(s.slice(0, 60)));
  });

  it('a grant family id is a UUID version 7 of its creation time: ids grow with time in both collations, and are unique', () => {
    const times = [0, 1, 255, 256, 2 ** 40, Date.now() - 1, Date.now(), Date.now() + 1, 2 ** 48 - 1];
    const ids = times.map((t) => newFamilyId(t));
    for (const [i, id] of ids.entries()) {
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), times[i]);
    }
    assert.deepEqual([...ids].sort(), ids);
    assert.deepEqual([...ids].sort((a, b) => a.localeCompare(b, 'en')), ids);
    const now = Date.now();
    assert.equal(new Set(Array.from({ length: 10_000 }, () => newFamilyId(now))).size, 10_000);
    // Out of range: clamped, never thrown.
    for (const t of [-5, Number.NaN, Infinity, 2 ** 48, 1e20]) assert.match(newFamilyId(t), /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
  });
});

for (const { kind, skip } of await databaseKinds()) {
  describe(`opaque tokens of both formats (${kind})`, { skip }, () => {
    let server: TestServer;
    let s: Awaited<ReturnType<typeof seed>>;
    let rs: { id: string; secret: string | undefined };
    const form = async (path: string, creds: { id: string; secret: string | undefined }, fields: Record<string, string>) => {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${creds.id}:${creds.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields),
      });
      const text = await res.text();
      return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
    };
    const introspect = (token: string) => form('/oauth/check_token', rs, { token });
    /** Stores tokens of the former format for `s`'s user, as a server before issue 16 did. */
    const storeLegacy = async () => {
      const { gh } = server;
      const now = gh.clock.now();
      const access = legacy(OPAQUE_PREFIX);
      const refresh = legacy(REFRESH_PREFIX);
      const familyId = randomUUID();
      await gh.storage.tokens.createFamily({ id: familyId, clientId: s.client.id, userId: s.user.id, scope: ['user'], createdAt: now, revokedAt: null });
      await gh.storage.tokens.saveAccess({
        tokenHash: sha256(access), jti: randomUUID(), familyId, clientId: s.client.id, userId: s.user.id, scope: ['user'], createdAt: now, expiresAt: now + 3600_000, revokedAt: null,
      });
      await gh.storage.tokens.saveRefresh({
        tokenHash: sha256(refresh), familyId, clientId: s.client.id, userId: s.user.id, scope: ['user'], createdAt: now, expiresAt: now + 86400_000, rotatedAt: null, revokedAt: null,
      });
      return { access, refresh };
    };

    before(async () => {
      server = await startServer({ db: kind });
      s = await seed(server, { tokenFormat: 'opaque' });
      rs = await server.createClient({ redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
    });
    after(() => server.close());

    it('issues access and refresh tokens in the time-ordered format, usable everywhere', async () => {
      const t = await s.tokens('user');
      for (const token of [t.access_token!, t.refresh_token!]) assert.match(token, /^gh_(at|rt)_[0-9a-z]{9}[A-Za-z0-9_-]{43}$/);
      assert.equal((await introspect(t.access_token!)).body.active, true);
      assert.equal((await introspect(t.refresh_token!)).body.active, true);
      assert.equal((await callUser(server.apiUrl, { token: t.access_token! })).status, 200);
      const rotated = await form('/oauth/token', s.client, { grant_type: 'refresh_token', refresh_token: t.refresh_token! });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      assert.equal((await introspect(t.refresh_token!)).body.active, false);
      await s.revoke(rotated.body.access_token as string);
      assert.equal((await introspect(rotated.body.access_token as string)).body.active, false);
      assert.equal((await callUser(server.apiUrl, { token: rotated.body.access_token as string })).status, 401);
    });

    it('keeps serving tokens issued before: introspection, /user, rotation (reuse detected), revocation', async () => {
      const old = await storeLegacy();
      const at = await introspect(old.access);
      assert.equal(at.body.active, true);
      assert.equal(at.body.client_id, s.client.id);
      assert.equal((await introspect(old.refresh)).body.active, true);
      assert.equal((await callUser(server.apiUrl, { token: old.access })).status, 200);

      const rotated = await form('/oauth/token', s.client, { grant_type: 'refresh_token', refresh_token: old.refresh });
      assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
      assert.match(rotated.body.refresh_token as string, /^gh_rt_[0-9a-z]{9}/);
      assert.equal((await introspect(rotated.body.access_token as string)).body.active, true);
      // RFC 9700 §4.14.2: the old token again revokes the family, the new tokens with it.
      assert.equal((await form('/oauth/token', s.client, { grant_type: 'refresh_token', refresh_token: old.refresh })).status, 400);
      assert.equal((await introspect(rotated.body.refresh_token as string)).body.active, false);
      assert.equal((await introspect(old.access)).body.active, false);

      const again = await storeLegacy();
      await s.revoke(again.access);
      assert.equal((await introspect(again.access)).body.active, false);
      assert.equal((await callUser(server.apiUrl, { token: again.access })).status, 401);
    });

    it('answers malformed and near-miss tokens with no 5xx on any endpoint', async () => {
      const good = newToken(OPAQUE_PREFIX, server.gh.clock.now());
      const odd = [
        'gh_at_', 'gh_rt_', `${good.slice(0, -1)}`, `${good}A`, `${good.slice(0, 6)}ZZZZZZZZZ${good.slice(15)}`, `gh_rt_${good.slice(6)}`,
        `gh_at_${'0'.repeat(52)}`, `gh_rt_${'z'.repeat(52)}`, 'gh_at_𝒳𝒳𝒳', `gh_at_${'a'.repeat(5000)}`,
      ];
      for (const token of odd) {
        const i = await introspect(token);
        assert.equal(i.status, 200, token);
        assert.equal(i.body.active, false, token);
        assert.equal((await form('/oauth/revoke', s.client, { token })).status, 200, token);
        const r = await form('/oauth/token', s.client, { grant_type: 'refresh_token', refresh_token: token });
        assert.equal(r.status, 400, token);
        assert.equal(r.body.error, 'invalid_grant', token);
        const u = await callUser(server.apiUrl, { query: { access_token: token } });
        assert.ok(u.status === 401 || u.status === 400, `${token}: ${u.status}`);
      }
    });
  });
}
