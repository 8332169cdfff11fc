import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const REDIRECT = 'https://app.example.test/callback';

for (const { kind, skip } of await databaseKinds()) {
  describe(`authorization code flow (${kind})`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind });
    });
    after(() => server.close());

    it('logs in, consents, exchanges the code with PKCE, refreshes with rotation', async () => {
      const user = await server.createUser('alice');
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'user read' });
      const verifier = randomBytes(32).toString('base64url');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      const q = new URLSearchParams({ response_type: 'code', client_id: client.id, redirect_uri: REDIRECT, scope: 'user', state: 'xyz', code_challenge: challenge, code_challenge_method: 'S256' });
      const agent = new Agent(server.url);

      const first = await agent.get(`/oauth2?${q}`);
      assert.equal(first.status, 302);
      const loginAt = new URL(first.headers.get('location')!, server.url);
      assert.equal(loginAt.pathname, '/login');

      const afterLogin = await agent.login(user.username, user.password, loginAt.searchParams.get('return_to')!);
      assert.equal(afterLogin.status, 303);
      const consent = await agent.get(afterLogin.headers.get('location')!);
      assert.equal(consent.status, 200);
      const form = parseForm(await consent.text());
      const decision = await agent.post(form.action, { ...form.fields, approve: 'true' });
      assert.equal(decision.status, 303);
      const back = new URL(decision.headers.get('location')!);
      assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
      assert.equal(back.searchParams.get('state'), 'xyz');
      assert.equal(back.searchParams.get('iss'), server.url);
      const code = back.searchParams.get('code')!;

      const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
      const tokenRes = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }),
      });
      assert.equal(tokenRes.status, 200);
      assert.equal(tokenRes.headers.get('cache-control'), 'no-store');
      const tokens = (await tokenRes.json()) as Record<string, string>;
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(tokens.scope, 'user');
      assert.ok(tokens.refresh_token);

      const refresh = (rt: string) => fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: rt }),
      });
      const r1 = await refresh(tokens.refresh_token!);
      assert.equal(r1.status, 200);
      const rotated = (await r1.json()) as Record<string, string>;
      assert.notEqual(rotated.refresh_token, tokens.refresh_token);
      // Reusing the old refresh token revokes the family: the new one dies too.
      const replay = await refresh(tokens.refresh_token!);
      assert.equal(replay.status, 400);
      assert.equal(((await replay.json()) as { error: string }).error, 'invalid_grant');
      const afterReplay = await refresh(rotated.refresh_token!);
      assert.equal(afterReplay.status, 400);
    });
  });
}
