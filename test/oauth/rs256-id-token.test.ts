import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey } from 'node:crypto';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { Agent } from '../helpers/agent.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, person, signIn } from '../oidc/support.js';

type Jwk = Record<string, string>;
const header = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { alg: string; kid: string; typ: string };
const jwks = async (server: TestServer) => ((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: Jwk[] }).keys;

/** An openid-client relying party that expects RS256 ID tokens and checks them against the discovered keys. */
function rsRelyingParty(server: TestServer, clientId: string, secret: string | undefined): Promise<oidc.Configuration> {
  return oidc.discovery(new URL(server.url), clientId, { client_secret: secret, id_token_signed_response_alg: 'RS256' }, oidc.ClientSecretBasic(), {
    execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks],
  });
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`RS256 ID tokens (${kind})`, { skip }, () => {
    let server: TestServer;
    let alice: Awaited<ReturnType<typeof person>>;
    before(async () => {
      server = await startServer({ db: kind, env: { GATEHOUSE_ADMIN_TOKEN: 'admin-token-for-tests-0123456789' } });
      alice = await person(server, 'alice');
    });
    after(() => server.close());

    it('the discovery document lists ES256 and RS256; the JWKS publishes a 2048-bit RSA key with its RFC 7638 thumbprint as kid', async () => {
      const meta = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.deepEqual(meta.id_token_signing_alg_values_supported, ['ES256', 'RS256']);
      const keys = await jwks(server);
      assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'RS256']);
      const rsa = keys.find((k) => k.alg === 'RS256')!;
      assert.equal(rsa.kty, 'RSA');
      assert.equal(rsa.use, 'sig');
      assert.equal(rsa.d, undefined, 'no private material');
      assert.equal(rsa.kid, createHash('sha256').update(JSON.stringify({ e: rsa.e, kty: 'RSA', n: rsa.n })).digest('base64url'));
      assert.equal(createPublicKey({ key: rsa, format: 'jwk' }).asymmetricKeyDetails?.modulusLength, 2048);
    });

    it('a client registered for RS256 gets RS256 ID tokens that openid-client verifies against the discovered keys; others keep ES256', async () => {
      const rs = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid profile', idTokenAlg: 'RS256' });
      const config = await rsRelyingParty(server, rs.id, rs.secret);
      const { tokens, nonce } = await signIn(config, new Agent(server.url), alice, 'openid profile');
      const claims = tokens.claims()!;
      assert.equal(claims.sub, alice.id);
      assert.equal(claims.nonce, nonce);
      const h = header(tokens.id_token!);
      assert.equal(h.alg, 'RS256');
      assert.equal(h.typ, 'JWT');
      assert.equal(h.kid, (await jwks(server)).find((k) => k.alg === 'RS256')!.kid);
      // Access tokens stay ES256 whatever the ID token's algorithm.
      assert.equal(header(tokens.access_token).alg, 'ES256');
      // An independent check with jose, RS256 only.
      const remote = jose.createRemoteJWKSet(new URL(`${server.url}/.well-known/jwks.json`));
      await jose.jwtVerify(tokens.id_token!, remote, { issuer: server.url, audience: rs.id, algorithms: ['RS256'] });

      // A refresh (OpenID Connect Core §12.2) signs the new ID token the same way.
      const es = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', idTokenAlg: 'ES256', trusted: true });
      const esConfig = await oidc.discovery(new URL(server.url), es.id, es.secret, oidc.ClientSecretBasic(), { execute: [oidc.allowInsecureRequests, oidc.enableNonRepudiationChecks] });
      const esTokens = await signIn(esConfig, new Agent(server.url), alice, 'openid');
      assert.equal(header(esTokens.tokens.id_token!).alg, 'ES256');
    });

    it('an RS256 ID token is accepted as id_token_hint at the end-session endpoint', async () => {
      const rs = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', idTokenAlg: 'RS256', postLogoutRedirectUris: ['https://rp.example.test/bye'] });
      const config = await rsRelyingParty(server, rs.id, rs.secret);
      const agent = new Agent(server.url);
      const { tokens } = await signIn(config, agent, alice, 'openid');
      const end = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: 'https://rp.example.test/bye', state: 's1' });
      const res = await agent.get(`${end.pathname}${end.search}`);
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), 'https://rp.example.test/bye?state=s1');
    });

    it('keys rotate replaces both keys; the old ones stay published; RS256 ID tokens then carry the new RSA kid', async () => {
      const before = await jwks(server);
      const rotated = await server.gh.keys.rotate(server.gh.clock.now() + 3_600_000);
      assert.deepEqual(rotated.rotated.map((k) => k.alg), ['ES256', 'RS256']);
      const after = await jwks(server);
      assert.equal(after.length, before.length + 2);
      const newRsa = rotated.rotated.find((k) => k.alg === 'RS256')!;
      assert.ok(after.some((k) => k.kid === newRsa.kid));
      const rs = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', idTokenAlg: 'RS256', trusted: true });
      // The new keys sign once every process has had time to publish them (PUBLISH_DELAY_MS, src/core/oauth/keys.ts).
      await new Promise((r) => setTimeout(r, 2_100));
      const { tokens } = await signIn(await rsRelyingParty(server, rs.id, rs.secret), new Agent(server.url), alice, 'openid');
      assert.equal(header(tokens.id_token!).kid, newRsa.kid);
      // The RSA private key is stored sealed, like the ES256 one.
      const stored = await server.gh.storage.keys.list();
      assert.equal(stored.filter((k) => k.alg === 'RS256').length, 2);
    });

    it('an access token signed with the RSA key is refused (access tokens are ES256 only)', async () => {
      const c = await server.createClient({ grantTypes: ['client_credentials'], introspect: true, scope: 'read' });
      const basic = `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;
      const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body });
      const at = ((await (await post('/oauth/token', 'grant_type=client_credentials')).json()) as { access_token: string }).access_token;
      const claims = JSON.parse(Buffer.from(at.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
      const forged = server.gh.keys.sign(claims, 'at+jwt', 'RS256');
      const active = async (t: string) => ((await (await post('/oauth/check_token', `token=${t}`)).json()) as { active: boolean }).active;
      assert.equal(await active(at), true);
      assert.equal(await active(forged), false);
    });

    it('bad --id-token-alg values are refused at registration (admin API: 400 invalid_request; the library: an input error)', async () => {
      for (const alg of ['HS256', 'none', 'rs256', 'PS256', 'x'.repeat(300)]) {
        const res = await fetch(`${server.url}/admin/clients`, {
          method: 'POST', headers: { authorization: 'Bearer admin-token-for-tests-0123456789', 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'bad', redirect_uris: [REDIRECT], id_token_signed_response_alg: alg }),
        });
        assert.equal(res.status, 400, alg);
        assert.equal(((await res.json()) as { error: string }).error, 'invalid_request');
      }
      for (const bad of [42, true, ['RS256']]) {
        const res = await fetch(`${server.url}/admin/clients`, {
          method: 'POST', headers: { authorization: 'Bearer admin-token-for-tests-0123456789', 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'bad', redirect_uris: [REDIRECT], id_token_signed_response_alg: bad }),
        });
        assert.equal(res.status, 400, JSON.stringify(bad));
      }
      const ok = await fetch(`${server.url}/admin/clients`, {
        method: 'POST', headers: { authorization: 'Bearer admin-token-for-tests-0123456789', 'content-type': 'application/json' },
        body: JSON.stringify({ client_name: 'good', redirect_uris: [REDIRECT], id_token_signed_response_alg: 'RS256' }),
      });
      assert.equal(ok.status, 201);
      assert.equal(((await ok.json()) as Record<string, unknown>).id_token_signed_response_alg, 'RS256');
    });
  });
}

describe('gatehouse client create --id-token-alg, keys rotate (command line)', () => {
  it('registers an RS256 client, refuses a bad algorithm, and rotates both keys', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'gh-rs256-'));
    const env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}` };
    try {
      const ok = await runCli(['client', 'create', '--name', 'RS', '--redirect-uri', REDIRECT, '--id-token-alg', 'RS256', '--json'], env);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal((JSON.parse(ok.stdout) as Record<string, unknown>).id_token_signed_response_alg, 'RS256');
      const bad = await runCli(['client', 'create', '--name', 'RS', '--redirect-uri', REDIRECT, '--id-token-alg', 'HS256', '--json'], env);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /ID token algorithm must be one of ES256, RS256/);
      assert.equal(bad.stdout, '');
      const rotated = await runCli(['keys', 'rotate', '--json'], env);
      assert.equal(rotated.code, 0, rotated.stderr);
      assert.equal((JSON.parse(rotated.stdout) as Record<string, unknown>).alg, 'ES256');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
