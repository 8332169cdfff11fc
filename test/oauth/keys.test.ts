import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestClock } from '../helpers/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';

describe('signing keys', () => {
  let server: TestServer;
  const clock = new TestClock();
  before(async () => {
    server = await startServer({ clock });
  });
  after(() => server.close());

  it('a rotated key keeps verifying its tokens until they expire, then leaves the JWKS', async () => {
    const rs = await server.createClient({ grantTypes: ['client_credentials'], introspect: true, scope: 'read' });
    const basic = `Basic ${Buffer.from(`${rs.id}:${rs.secret}`).toString('base64')}`;
    const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body });
    const oldToken = ((await (await post('/oauth/token', 'grant_type=client_credentials')).json()) as { access_token: string }).access_token;
    const oldKid = JSON.parse(Buffer.from(oldToken.split('.')[0]!, 'base64url').toString()).kid as string;

    const ttl = server.gh.oauth.accessTokenTtl * 1000;
    const newKey = await server.gh.keys.rotate(clock.now() + ttl + 60_000);
    const newToken = ((await (await post('/oauth/token', 'grant_type=client_credentials')).json()) as { access_token: string }).access_token;
    assert.equal(JSON.parse(Buffer.from(newToken.split('.')[0]!, 'base64url').toString()).kid, newKey.kid);

    const introspect = async (t: string) => ((await (await post('/oauth/check_token', `token=${t}`)).json()) as { active: boolean }).active;
    assert.equal(await introspect(oldToken), true, 'old-key token still valid after rotation');
    // The access-token keys (ES256); the RS256 keys for ID tokens rotate beside them (test/oauth/rs256-id-token.test.ts).
    const kids = async () => ((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string; alg: string }[] }).keys.filter((k) => k.alg === 'ES256').map((k) => k.kid);
    assert.deepEqual((await kids()).sort(), [oldKid, newKey.kid].sort());

    // After the old key's tokens have expired, it is no longer published.
    clock.advance(ttl + 120_000);
    await server.gh.storage.keys.deleteExpired(clock.now());
    (server.gh.keys as unknown as { loadedAt: number }).loadedAt = 0;
    server.gh.keys.maybeReload();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await kids(), [newKey.kid]);
    assert.equal(await introspect(oldToken), false);
  });

  // Guards the verified-token memory in src/core/oauth/keys.ts verify(): it remembers
  // signatures by the token's exact bytes only, so expiry, revocation and tampering still show.
  it('a remembered verification still sees expiry, revocation and a tampered payload', async () => {
    const rs = await server.createClient({ grantTypes: ['client_credentials'], introspect: true, scope: 'read write' });
    const basic = `Basic ${Buffer.from(`${rs.id}:${rs.secret}`).toString('base64')}`;
    const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body });
    const issue = async () => ((await (await post('/oauth/token', 'grant_type=client_credentials&scope=read')).json()) as { access_token: string }).access_token;
    const active = async (t: string) => ((await (await post('/oauth/check_token', `token=${t}`)).json()) as { active: boolean }).active;

    const token = await issue();
    assert.equal(await active(token), true);
    assert.equal(await active(token), true, 'answered from memory');
    const [h, p, sig] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, scope: 'read write' })).toString('base64url')}.${sig}`;
    assert.equal(await active(forged), false, 'another payload under a remembered signature');

    assert.equal((await post('/oauth/revoke', `token=${token}`)).status, 200);
    assert.equal(await active(token), false, 'revoked after being remembered');

    const later = await issue();
    assert.equal(await active(later), true);
    clock.advance(server.gh.oauth.accessTokenTtl * 1000 + 1000);
    assert.equal(await active(later), false, 'expired after being remembered');
  });
});
