import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { TestClock } from '../helpers/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { assertBearerError, callUser, seed } from './support.js';
import { PUBLISH_DELAY_MS } from '../../src/core/oauth/keys.js';

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');

// GATEHOUSE_TOKEN_VERIFICATION=local: JWTs checked against {auth_url}/.well-known/jwks.json per RFC 9068 §4.
describe('resource server /user, local JWT verification', () => {
  const clock = new TestClock();
  let server: TestServer;
  let s: Awaited<ReturnType<typeof seed>>;
  let api: string;
  before(async () => {
    server = await startServer({ clock, env: { GATEHOUSE_TOKEN_VERIFICATION: 'local' } });
    api = server.apiUrl;
    s = await seed(server);
  });
  after(() => server.close());

  /** A token signed with the server's real key, with some claims or header changed. */
  const forge = (claims: Record<string, unknown> = {}, typ = 'at+jwt') => {
    const now = Math.floor(clock.now() / 1000);
    return server.gh.keys.sign({
      iss: server.url, sub: s.user.id, aud: api, client_id: s.client.id, scope: 'user', iat: now, exp: now + 600, jti: randomUUID(), ...claims,
    }, typ);
  };

  it('accepts a token from the token endpoint and one signed with its claims', async () => {
    assert.equal((await callUser(api, { token: await s.token('user') })).status, 200);
    assert.equal((await callUser(api, { token: forge() })).status, 200);
    assert.equal((await callUser(api, { token: forge({ aud: ['https://other.example', api] }) })).status, 200);
  });

  it('rejects bad signature, wrong iss, aud or typ, and algorithms off the allow-list', async () => {
    const good = forge();
    const [h, p, sig] = good.split('.') as [string, string, string];
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    assertBearerError(await callUser(api, { token: `${h}.${p}.${flipped}` }), 401, 'invalid_token');
    // Claims changed after signing.
    assertBearerError(await callUser(api, { token: `${h}.${b64({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), scope: 'user admin' })}.${sig}` }), 401, 'invalid_token');
    assertBearerError(await callUser(api, { token: forge({ aud: 'https://other.example' }) }), 401, 'invalid_token');
    assertBearerError(await callUser(api, { token: forge({ iss: 'https://evil.example' }) }), 401, 'invalid_token');
    assertBearerError(await callUser(api, { token: forge({}, 'JWT') }), 401, 'invalid_token');
    const kid = JSON.parse(Buffer.from(h, 'base64url').toString()).kid as string;
    // alg=none and HS256 keyed with public material (RFC 8725 §2.1, §3.1).
    assertBearerError(await callUser(api, { token: `${b64({ alg: 'none', typ: 'at+jwt', kid })}.${p}.` }), 401, 'invalid_token');
    const hsInput = `${b64({ alg: 'HS256', typ: 'at+jwt', kid })}.${p}`;
    const jwk = JSON.stringify(server.gh.keys.jwks().keys[0]);
    assertBearerError(await callUser(api, { token: `${hsInput}.${createHmac('sha256', jwk).update(hsInput).digest('base64url')}` }), 401, 'invalid_token');
    assertBearerError(await callUser(api, { token: `${b64({ alg: 'ES256', typ: 'at+jwt', kid: 'no-such-key' })}.${p}.${sig}` }), 401, 'invalid_token');
  });

  it('rejects an expired token', async () => {
    const token = forge({ exp: Math.floor(clock.now() / 1000) + 30 });
    assert.equal((await callUser(api, { token })).status, 200);
    clock.advance(31_000);
    const a = await callUser(api, { token });
    assertBearerError(a, 401, 'invalid_token');
    assert.match(a.challenge!, /expired/);
  });

  it('still looks opaque tokens up in the token table', async () => {
    const opaque = await seed(server, { tokenFormat: 'opaque', username: 'bob' });
    const token = await opaque.token('email');
    assert.match(token, /^gh_at_/);
    assert.deepEqual((await callUser(api, { token })).body, { username: 'bob', email: 'bob@example.test', email_verified: false });
  });

  it('accepts a rotated-out key until its tokens expire, and a new key at once', async () => {
    assert.equal((await callUser(api, { token: await s.token('user') })).status, 200); // JWKS fetched
    const signedByOld = await s.token('user'); // not shown to the API yet
    const ttl = server.gh.oauth.accessTokenTtl * 1000;
    await server.gh.keys.rotate(clock.now() + ttl);
    // A new key signs only once every process can have published it (PUBLISH_DELAY_MS, src/core/oauth/keys.ts).
    clock.advance(PUBLISH_DELAY_MS);
    const signedByNew = await s.token('user');
    assert.notEqual(JSON.parse(Buffer.from(signedByNew.split('.')[0]!, 'base64url').toString()).kid,
      JSON.parse(Buffer.from(signedByOld.split('.')[0]!, 'base64url').toString()).kid);
    clock.advance(2000); // past the JWKS refresh cooldown
    assert.equal((await callUser(api, { token: signedByNew })).status, 200, 'unknown kid → one JWKS refresh');
    assert.equal((await callUser(api, { token: signedByOld })).status, 200, 'old key still published');
    clock.advance(ttl);
    assertBearerError(await callUser(api, { token: signedByOld }), 401, 'invalid_token');
  });
});
