/**
 * Refresh tokens rotate on every use; presenting a used one revokes the whole
 * family, the newest refresh token and the access tokens included (RFC 9700
 * §4.14.2, RFC 6749 §10.4). Atomicity is checked on every database.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { issueCode } from '../helpers/authorize.js';
import { signedIn } from '../helpers/people.js';
import { basic, expectOAuthError, introspect, post, REDIRECT } from './support.js';

type Client = { id: string; secret: string | undefined };
type Tokens = { access_token: string; refresh_token: string };

for (const { kind, skip } of await databaseKinds()) {
  describe(`refresh token rotation (${kind})`, { skip }, () => {
    let server: TestServer;
    let agent: Agent;
    let rs: Client;
    const clients: Record<'jwt' | 'opaque', Client> = {} as never;

    const refresh = (client: Client, token: string) =>
      post(server.url, '/oauth/token', { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(client.id, client.secret!) });
    const grant = async (client: Client): Promise<Tokens> => {
      const { code, verifier } = await issueCode(agent, client.id);
      const res = await post(server.url, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT },
        { authorization: basic(client.id, client.secret!) });
      assert.equal(res.status, 200);
      return (await res.json()) as Tokens;
    };
    const active = async (token: string) => (await introspect(server, token, rs)).active;

    before(async () => {
      server = await startServer({ db: kind });
      clients.jwt = await server.createClient({ trusted: true });
      clients.opaque = await server.createClient({ trusted: true, tokenFormat: 'opaque' });
      rs = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [], introspect: true });
      agent = await signedIn(server, 'liam');
    });
    after(() => server.close());

    for (const format of ['jwt', 'opaque'] as const) {
      // Guards `markRotated` (src/store/tokens.ts) and the reuse branch of
      // src/core/oauth/grants/refresh-token.ts that calls `revokeFamily`.
      it(`rotates, and reuse of a rotated token revokes the family (${format} access tokens)`, async () => {
        const client = clients[format];
        const first = await grant(client);
        const r1 = await refresh(client, first.refresh_token);
        assert.equal(r1.status, 200);
        const second = (await r1.json()) as Tokens;
        assert.notEqual(second.refresh_token, first.refresh_token);
        assert.equal(await active(first.refresh_token), false, 'the rotated token is spent');
        assert.equal(await active(second.refresh_token), true);
        assert.equal(await active(second.access_token), true);

        await expectOAuthError(await refresh(client, first.refresh_token), 400, 'invalid_grant');
        assert.equal(await active(second.refresh_token), false, 'the newest refresh token dies with the family');
        assert.equal(await active(second.access_token), false, 'access tokens of the family die too');
        assert.equal(await active(first.access_token), false);
        await expectOAuthError(await refresh(client, second.refresh_token), 400, 'invalid_grant');
      });
    }

    // Guards `existing.clientId !== client.id` in src/core/oauth/grants/refresh-token.ts,
    // checked before the token is marked used, so a foreign client cannot burn it.
    it('is bound to its client, and a foreign client cannot burn it', async () => {
      const mine = await grant(clients.jwt);
      await expectOAuthError(await refresh(clients.opaque, mine.refresh_token), 400, 'invalid_grant');
      assert.equal((await refresh(clients.jwt, mine.refresh_token)).status, 200);
    });

    // Guards the conditional UPDATE in src/store/tokens.ts `markRotated`: of 20
    // concurrent uses exactly one rotates; the others are reuse, which revokes the family.
    it('of 20 concurrent refreshes exactly one succeeds, and the rest revoke the family', async () => {
      const client = clients.opaque;
      const { refresh_token } = await grant(client);
      const results = await Promise.all(Array.from({ length: 20 }, () => refresh(client, refresh_token)));
      const ok = results.filter((r) => r.status === 200);
      assert.equal(ok.length, 1, `statuses: ${results.map((r) => r.status).join(',')}`);
      for (const r of results) if (r.status !== 200) await expectOAuthError(r, 400, 'invalid_grant');
      const winner = (await ok[0]!.json()) as Tokens;
      assert.equal(await active(winner.refresh_token), false);
      assert.equal(await active(winner.access_token), false);
    });
  });
}
