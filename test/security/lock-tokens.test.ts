// A lock's refusal outlives the unlock for every token issued before it (issue 24, finding 2;
// src/core/account-lock.ts, `accountUsable`): a JWT access token checked by its signature alone
// (GATEHOUSE_TOKEN_VERIFICATION=local) or of no token family (the implicit grant's) would otherwise
// work again once the account is unlocked. /user refuses it with every verification mode (table,
// local, introspection as a process of its own), introspection answers active:false and UserInfo
// refuses it; a token issued after the unlock works. On SQLite and PostgreSQL.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { createClient } from '../../src/core/admin.js';
import { lockAccount, unlockAccount } from '../../src/core/account-lock.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { TestClock } from '../helpers/clock.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl } from '../helpers/db.js';
import { freePort } from '../helpers/ports.js';
import { postForm } from '../device/support.js';
import { assertBearerError, callUser, seed } from '../resource/support.js';

type Mode = 'table' | 'local' | 'introspection';

for (const { kind, skip } of await databaseKinds()) {
  for (const mode of ['table', 'local', 'introspection'] as const satisfies readonly Mode[]) {
    describe(`tokens issued before a lock stay refused after the unlock (${kind}, verification ${mode})`, { skip, timeout: 120_000 }, () => {
      // Starts on a whole second plus 400 ms, so "the lock's own second" is plain below.
      const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000 + 400);
      const dir = mkdtempSync(join(tmpdir(), 'gh-lock-tokens-'));
      // Two processes (introspection) share one database: a file, or a PostgreSQL schema.
      const databaseUrl = kind === 'sqlite' ? `sqlite:${join(dir, 'g.db')}` : freshDatabaseUrl('postgres');
      const base = { GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'silent' };
      let auth: RunningGatehouse;
      let api: RunningGatehouse | undefined;
      let apiUrl: string;
      let introspector: { id: string; secret: string };
      let s: Awaited<ReturnType<typeof seed>>;

      before(async () => {
        if (mode === 'introspection') {
          const apiPort = String(await freePort());
          auth = await startGatehouse(loadConfig({ ...base, GATEHOUSE_ROLES: 'auth', GATEHOUSE_API_URL: `http://127.0.0.1:${apiPort}` }), { clock });
          const { client, secret } = await createClient(auth.gh.storage, clock, { name: 'Resource server', redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
          introspector = { id: client.id, secret: secret! };
          api = await startGatehouse(loadConfig({
            ...base, GATEHOUSE_ROLES: 'api', GATEHOUSE_API_PORT: apiPort, GATEHOUSE_AUTH_URL: auth.authUrl, GATEHOUSE_TOKEN_VERIFICATION: 'introspection',
            GATEHOUSE_INTROSPECTION_CLIENT_ID: client.id, GATEHOUSE_INTROSPECTION_CLIENT_SECRET: secret!, GATEHOUSE_INTROSPECTION_CACHE_TTL: '10',
          }), { clock });
          apiUrl = api.apiUrl;
        } else {
          auth = await startGatehouse(loadConfig({ ...base, GATEHOUSE_TOKEN_VERIFICATION: mode }), { clock });
          const { client, secret } = await createClient(auth.gh.storage, clock, { name: 'Resource server', redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
          introspector = { id: client.id, secret: secret! };
          apiUrl = auth.apiUrl;
        }
        s = await seed({ gh: auth.gh, url: auth.authUrl });
      });
      after(async () => {
        await api?.close();
        await auth?.close();
        await dropDatabase(databaseUrl);
        rmSync(dir, { recursive: true, force: true });
      });

      const introspect = async (token: string) => (await postForm(`${auth.authUrl}/oauth/check_token`, { token }, introspector)).body;
      const userInfo = (token: string) => fetch(`${auth.authUrl}/userinfo`, { headers: { authorization: `Bearer ${token}` } });
      /** A JWT access token of no token family, as the implicit grant issues, signed with the server's key. */
      const familyLess = (iat = Math.floor(clock.now() / 1000)) => auth.gh.keys.sign({
        iss: auth.authUrl, sub: s.user.id, aud: apiUrl, client_id: s.client.id, scope: 'openid user', iat, exp: iat + 3600, jti: randomUUID(),
      }, 'at+jwt');

      it('refuses at /user, introspection and UserInfo a JWT from before the lock, and accepts one from after the unlock', async () => {
        const issued = await s.tokens('user');
        const loose = familyLess();
        assert.equal((await callUser(apiUrl, { token: issued.access_token! })).status, 200);
        assert.equal((await callUser(apiUrl, { token: loose })).status, 200);
        assert.equal((await introspect(loose)).active, true);
        assert.equal((await userInfo(loose)).status, 200);

        clock.advance(1_000);
        const lockedAt = clock.now();
        assert.ok(await auth.gh.storage.transaction((tx) => lockAccount(tx, s.user.id, { by: 'admin' }, lockedAt)));
        // Issued in the lock's second: `iat` cannot tell before from after, so it counts as before.
        const sameSecond = familyLess(Math.floor(lockedAt / 1000));
        for (const t of [issued.access_token!, loose]) assertBearerError(await callUser(apiUrl, { token: t }), 401, 'invalid_token');

        clock.advance(60_000);
        assert.equal((await unlockAccount(auth.gh.storage, s.user.id, { by: 'admin' }, clock.now()))?.wasLocked, true);
        for (const t of [issued.access_token!, loose, sameSecond]) {
          const a = await callUser(apiUrl, { token: t });
          assertBearerError(a, 401, 'invalid_token');
          // With the other modes the family's revocation (table) or introspection (active:false) refuses first.
          if (mode === 'local') assert.match(a.challenge!, /issued before the account was locked/);
          assert.equal((await introspect(t)).active, false, 'introspection: inactive');
        }
        const info = await userInfo(loose);
        assert.equal(info.status, 401);
        assert.match(info.headers.get('www-authenticate') ?? '', /invalid_token/);
        // The refresh token was revoked with its family by the lock.
        assert.equal((await postForm(`${auth.authUrl}/oauth/token`, { grant_type: 'refresh_token', refresh_token: issued.refresh_token! }, s.client)).body.error, 'invalid_grant');

        // After the unlock: a new sign-in's token works, and one of the second after the lock's.
        const fresh = await s.tokens('user');
        assert.equal((await callUser(apiUrl, { token: fresh.access_token! })).status, 200);
        assert.equal((await introspect(fresh.access_token!)).active, true);
        const nextSecond = familyLess(Math.floor(lockedAt / 1000) + 1);
        assert.equal((await callUser(apiUrl, { token: nextSecond })).status, 200);
        assert.equal((await userInfo(familyLess())).status, 200);
      });

      it('a second lock moves the line: tokens from between the two locks are refused after the second unlock', async () => {
        const between = await s.tokens('user');
        clock.advance(5_000);
        assert.ok(await auth.gh.storage.transaction((tx) => lockAccount(tx, s.user.id, { by: 'cli' }, clock.now())));
        clock.advance(5_000);
        await unlockAccount(auth.gh.storage, s.user.id, { by: 'cli' }, clock.now());
        assertBearerError(await callUser(apiUrl, { token: between.access_token! }), 401, 'invalid_token');
        assert.equal((await introspect(between.access_token!)).active, false);
        const after = await s.tokens('user');
        assert.equal((await callUser(apiUrl, { token: after.access_token! })).status, 200);
      });
    });
  }
}
