import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { TestClock } from '../helpers/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertBearerError, callUser, seed } from './support.js';

// The default verification (`table`): every presentation method and failure of RFC 6750 against {api_url}/user.
for (const { kind, skip } of await databaseKinds()) {
  describe(`resource server /user, token table (${kind})`, { skip }, () => {
    const clock = new TestClock();
    let server: TestServer;
    let s: Awaited<ReturnType<typeof seed>>;
    let api: string;
    before(async () => {
      server = await startServer({ db: kind, clock, env: { GATEHOUSE_INTROSPECTION_CACHE_TTL: '5' } });
      api = server.apiUrl;
      s = await seed(server);
    });
    after(() => server.close());

    it('accepts the token in the header, the form body and the query (RFC 6750 §2.1–2.3)', async () => {
      const token = await s.token('user');
      const expected = { username: 'alice', name: 'Alice Liddell', email: 'alice@example.test', email_verified: false };
      const header = await callUser(api, { token });
      assert.equal(header.status, 200);
      assert.deepEqual(header.body, expected);
      assert.equal(header.headers.get('cache-control'), 'no-store');
      assert.deepEqual((await callUser(api, { token, method: 'POST' })).body, expected);
      assert.deepEqual((await callUser(api, { form: new URLSearchParams({ access_token: token }).toString() })).body, expected);
      assert.deepEqual((await callUser(api, { query: { access_token: token } })).body, expected);
      assert.deepEqual((await callUser(api, { query: { access_token: token }, method: 'POST' })).body, expected);
      // The scheme name is case-insensitive (RFC 7235 §2.1).
      assert.equal((await callUser(api, { headers: { authorization: `bearer ${token}` } })).status, 200);
    });

    it('rejects more than one method, repeated and malformed tokens with 400 invalid_request', async () => {
      const token = await s.token('user');
      const form = new URLSearchParams({ access_token: token }).toString();
      assertBearerError(await callUser(api, { token, query: { access_token: token } }), 400, 'invalid_request');
      assertBearerError(await callUser(api, { token, form }), 400, 'invalid_request');
      assertBearerError(await callUser(api, { form, query: { access_token: token } }), 400, 'invalid_request');
      assertBearerError(await callUser(api, { query: `access_token=${token}&access_token=${token}` }), 400, 'invalid_request');
      assertBearerError(await callUser(api, { query: 'access_token=' }), 400, 'invalid_request');
      assertBearerError(await callUser(api, { headers: { authorization: 'Bearer' } }), 400, 'invalid_request');
      assertBearerError(await callUser(api, { headers: { authorization: 'Bearer two words' } }), 400, 'invalid_request');
      // A body the server cannot take is still answered in RFC 6750's shape.
      assertBearerError(await callUser(api, { token, method: 'POST', headers: { 'content-type': 'text/x-unknown' } }), 400, 'invalid_request');
    });

    it('answers 401 without an error code when no token is sent (RFC 6750 §3.1)', async () => {
      for (const a of [await callUser(api), await callUser(api, { headers: { authorization: 'Basic YTpi' } })]) {
        assert.equal(a.status, 401);
        // No error code; RFC 9728 §5.1 adds where the resource's metadata is.
        // RFC 9449 §7.1: and the DPoP challenge, with the proof algorithms.
        assert.equal(a.challenge, `Bearer realm="gatehouse", resource_metadata="${api}/.well-known/oauth-protected-resource", DPoP algs="ES256 RS256 PS256 EdDSA Ed25519"`);
        assert.equal(a.body.error, undefined);
      }
    });

    it('answers 401 invalid_token for unknown, refresh, client-only and expired tokens', async () => {
      assertBearerError(await callUser(api, { token: 'gh_at_nosuchtoken' }), 401, 'invalid_token');
      assertBearerError(await callUser(api, { token: 'a.b.c' }), 401, 'invalid_token');
      const { refresh_token: refresh } = await s.tokens('user');
      assertBearerError(await callUser(api, { token: refresh! }), 401, 'invalid_token');
      assertBearerError(await callUser(api, { token: await s.clientToken() }), 401, 'invalid_token');
      const token = await s.token('user');
      clock.advance(3600_000 + 1000);
      assertBearerError(await callUser(api, { token }), 401, 'invalid_token');
    });

    it('gives fields by scope: user → name and email, profile → name, email → email; else 403', async () => {
      const fields = async (scope: string) => (await callUser(api, { token: await s.token(scope) })).body;
      assert.deepEqual(await fields('user'), { username: 'alice', name: 'Alice Liddell', email: 'alice@example.test', email_verified: false });
      assert.deepEqual(await fields('profile'), { username: 'alice', name: 'Alice Liddell' });
      assert.deepEqual(await fields('email'), { username: 'alice', email: 'alice@example.test', email_verified: false });
      assert.deepEqual(await fields('profile email'), { username: 'alice', name: 'Alice Liddell', email: 'alice@example.test', email_verified: false });
      const denied = await callUser(api, { token: await s.token('chat') });
      assertBearerError(denied, 403, 'insufficient_scope');
      assert.match(denied.challenge!, /scope="user"/);
    });

    it('stops accepting a revoked token once the cache lifetime has passed', async () => {
      const token = await s.token('user');
      assert.equal((await callUser(api, { token })).status, 200);
      await s.revoke(token);
      // Within GATEHOUSE_INTROSPECTION_CACHE_TTL (5 s) the remembered answer may still be used…
      assert.equal((await callUser(api, { token })).status, 200);
      clock.advance(5001);
      // …and not after it.
      assertBearerError(await callUser(api, { token }), 401, 'invalid_token');
    });

    it('answers CORS preflights and unknown paths', async () => {
      const pre = await fetch(`${api}/user`, { method: 'OPTIONS', headers: { origin: 'http://127.0.0.1:3000', 'access-control-request-headers': 'authorization' } });
      assert.equal(pre.status, 204);
      assert.equal(pre.headers.get('access-control-allow-origin'), '*');
      assert.match(pre.headers.get('access-control-allow-headers')!, /Authorization/);
      const missing = await fetch(`${api}/nothing-here`);
      assert.equal(missing.status, 404);
    });
  });
}
