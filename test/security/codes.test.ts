/**
 * Authorization codes: single use, bound to their client and redirect URI,
 * and a replay revokes what the code issued (RFC 6749 §4.1.2, §4.1.3,
 * §10.5; RFC 9700 §4.5). Atomicity is checked on every database.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { issueCode } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { REDIRECT, basic, expectOAuthError, introspect, post } from './support.js';

type Client = { id: string; secret: string | undefined };

for (const { kind, skip } of await databaseKinds()) {
  describe(`authorization codes (${kind})`, { skip }, () => {
    let server: TestServer;
    let agent: Agent;
    let app: Client;
    let other: Client;
    let rs: Client;
    const redeem = (client: Client, fields: Record<string, string>) =>
      post(server.url, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, ...fields }, { authorization: basic(client.id, client.secret!) });

    before(async () => {
      server = await startServer({ db: kind });
      app = await server.createClient({ trusted: true, scope: 'user read', tokenFormat: 'opaque' });
      other = await server.createClient({ trusted: true, scope: 'user read' });
      rs = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [], introspect: true });
      agent = await signedIn(server, 'carol');
    });
    after(() => server.close());

    // Guards the conditional UPDATE in src/store/codes.ts `consume` and the
    // replay branch in src/core/oauth/grants/authorization-code.ts.
    it('is single-use: a replay is refused and revokes the tokens issued from the code', async () => {
      const { code, verifier } = await issueCode(agent, app.id);
      const first = await redeem(app, { code, code_verifier: verifier });
      assert.equal(first.status, 200);
      const tokens = (await first.json()) as { access_token: string; refresh_token: string };
      assert.equal((await introspect(server, tokens.access_token, rs)).active, true);

      await expectOAuthError(await redeem(app, { code, code_verifier: verifier }), 400, 'invalid_grant');
      assert.equal((await introspect(server, tokens.access_token, rs)).active, false, 'access token revoked by the replay');
      assert.equal((await introspect(server, tokens.refresh_token, rs)).active, false, 'refresh token revoked by the replay');
    });

    // Guards the `client_id` condition of `consume` in src/store/codes.ts, called from
    // src/core/oauth/grants/authorization-code.ts.
    it('is bound to the client it was issued to', async () => {
      const { code, verifier } = await issueCode(agent, app.id);
      await expectOAuthError(await redeem(other, { code, code_verifier: verifier }), 400, 'invalid_grant');
    });

    // RFC 6749 §4.1.3: another client presenting the code burnt it, so anyone who saw a
    // public client's code (no secret needed) could deny it, or poison it as a "replay".
    it("another client's attempt neither burns the code nor revokes what it issued", async () => {
      const native = await server.createClient({ trusted: true, public: true, scope: 'user read', tokenFormat: 'opaque' });
      const { code, verifier } = await issueCode(agent, native.id);
      const redeemNative = () => post(server.url, '/oauth/token', { grant_type: 'authorization_code', redirect_uri: REDIRECT, client_id: native.id, code, code_verifier: verifier });
      await expectOAuthError(await redeem(other, { code, code_verifier: verifier }), 400, 'invalid_grant');
      const first = await redeemNative();
      assert.equal(first.status, 200, await first.clone().text());
      const { access_token } = (await first.json()) as { access_token: string };
      await expectOAuthError(await redeem(other, { code, code_verifier: verifier }), 400, 'invalid_grant');
      assert.equal((await introspect(server, access_token, rs)).active, true, 'a foreign client is no replay');
      // The owner's own second use still is one (the control).
      await expectOAuthError(await redeemNative(), 400, 'invalid_grant');
      assert.equal((await introspect(server, access_token, rs)).active, false);
    });

    // Guards `redirectUri !== c.redirectUri` in src/core/oauth/grants/authorization-code.ts (§4.1.3).
    it('is bound to the redirect_uri of the authorization request', async () => {
      for (const redirect of [`${REDIRECT}/x`, 'https://evil.example/callback', undefined]) {
        const { code, verifier } = await issueCode(agent, app.id);
        const fields: Record<string, string> = { code, code_verifier: verifier };
        const res = await post(server.url, '/oauth/token', {
          grant_type: 'authorization_code', ...fields, ...(redirect ? { redirect_uri: redirect } : {}),
        }, { authorization: basic(app.id, app.secret!) });
        await expectOAuthError(res, 400, 'invalid_grant');
      }
    });

    it('expires (codeTtl)', async () => {
      const clock = (await import('../helpers/clock.js')).TestClock;
      const c = new clock();
      const s = await startServer({ db: kind, clock: c });
      try {
        const client = await s.createClient({ trusted: true });
        const a = await signedIn(s, 'dave');
        const { code, verifier } = await issueCode(a, client.id);
        c.advance(s.gh.oauth.codeTtl * 1000 + 1);
        const res = await post(s.url, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT },
          { authorization: basic(client.id, client.secret!) });
        await expectOAuthError(res, 400, 'invalid_grant');
      } finally {
        await s.close();
      }
    });

    // Guards the atomic `consume` (src/store/codes.ts) and the tombstone in the
    // replay branch of src/core/oauth/grants/authorization-code.ts: of 20
    // concurrent redemptions exactly one wins, and because the other 19 are
    // replays, what the winner got is revoked even though it raced them.
    it('of 20 concurrent redemptions of one code exactly one succeeds, and the replays revoke it', async () => {
      const { code, verifier } = await issueCode(agent, app.id);
      const results = await Promise.all(Array.from({ length: 20 }, () => redeem(app, { code, code_verifier: verifier })));
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 1, `statuses: ${results.map((r) => r.status).join(',')}`);
      for (const r of results) if (r.status !== 200) await expectOAuthError(r, 400, 'invalid_grant');
      const tokens = (await ok[0]!.json()) as { access_token: string; refresh_token: string };
      assert.equal((await introspect(server, tokens.access_token, rs)).active, false);
      assert.equal((await introspect(server, tokens.refresh_token, rs)).active, false);
    });
  });
}
