import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { startEmailVerification, VERIFY_EMAIL_TTL_MS } from '../../src/core/account/verify-email.js';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SmtpSink } from '../mail/support.js';
import { callUser } from '../resource/support.js';
import type { SqlStorage } from '../../src/store/index.js';
import { person, relyingParty, signIn } from '../oidc/support.js';

/** The stored verification links (the test reads the table itself). */
const links = (server: TestServer) => (server.gh.storage as unknown as SqlStorage).database.db.selectFrom('email_verifications').selectAll().execute();

/** The link a 'verify-email' message carries, from its text part. */
function linkIn(text: string): URL {
  const m = /https?:\/\/\S+\/account\/verify-email\?token=[\w-]+/.exec(text);
  assert.ok(m, `no verification link in:\n${text}`);
  return new URL(m[0]);
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`e-mail verification by link (${kind})`, { skip }, () => {
    let server: TestServer;
    let sink: SmtpSink;

    before(async () => {
      sink = await new SmtpSink().start();
      server = await startServer({ db: kind, env: { GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${sink.port}` } });
    });
    after(async () => {
      await server.close();
      await sink.stop();
    });

    /** Starts a verification of `email` for the account as sign-up and the account page do; returns the link as e-mailed. */
    const send = async (userId: string, email: string, at = server.gh.clock.now()) => {
      const user = (await server.gh.storage.users.get(userId))!;
      const n = sink.received.length;
      const started = await server.gh.storage.transaction((tx) => startEmailVerification(server.gh.mailer, tx, user, email, at));
      assert.equal(started.sent, true);
      const mail = (await sink.waitFor(n + 1))[n]!;
      assert.deepEqual(mail.rcptTo, [email]);
      return linkIn(mail.text);
    };
    const follow = (link: URL, agent = new Agent(server.url)) => agent.get(`${link.pathname}${link.search}`);
    const user = async (id: string) => (await server.gh.storage.users.get(id))!;
    const events = async (type: 'user.email_verified' | 'user.updated', userId: string) =>
      (await server.gh.storage.events.list({ type, limit: 100 })).filter((e) => e.userId === userId).map((e) => e.data as Record<string, unknown>);

    it('an account starts unverified; following the e-mailed link once marks its address verified and records user.email_verified', async () => {
      const u = await server.createUser(`ada_${kind}`);
      assert.equal((await user(u.id)).emailVerified, false);
      const link = await send(u.id, `ada_${kind}@example.test`);
      assert.equal(link.origin, new URL(server.url).origin);
      assert.equal(link.searchParams.get('token')!.length, 43, '256 bits, base64url');
      // The token is kept only as its hash.
      const stored = JSON.stringify(await links(server));
      assert.ok(!stored.includes(link.searchParams.get('token')!));

      const res = await follow(link);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /E-mail address confirmed/);
      assert.equal((await user(u.id)).emailVerified, true);
      assert.deepEqual((await events('user.email_verified', u.id)).map((d) => d.email), [`ada_${kind}@example.test`]);
      assert.deepEqual(await events('user.updated', u.id), [], 'the address did not change');

      const again = await follow(link);
      assert.equal(again.status, 400);
      assert.match(await again.text(), /already used, was replaced by a newer one, or has expired[\s\S]*Nothing was changed/);
      assert.equal((await events('user.email_verified', u.id)).length, 1);
    });

    it('a change of address counts only once its link is followed; then user.updated is recorded', async () => {
      const u = await server.createUser(`bea_${kind}`);
      const link = await send(u.id, `bea.new_${kind}@example.test`);
      // Until the link is followed the old address stands.
      assert.equal((await user(u.id)).email, `bea_${kind}@example.test`);
      const res = await follow(link);
      assert.equal(res.status, 200);
      assert.match(await res.text(), new RegExp(`now <strong>bea\\.new_${kind}@example\\.test</strong>`));
      const after = await user(u.id);
      assert.equal(after.email, `bea.new_${kind}@example.test`);
      assert.equal(after.emailVerified, true);
      assert.deepEqual((await events('user.updated', u.id)).map((d) => [d.fields, d.updated_by]), [[['email'], 'self']]);
      // An administrator's change of address is not a followed link: unverified again.
      await server.gh.accountTransactions.transaction((tx) =>
        server.gh.userAccounts.updateUser(tx, u.id, { email: `bea.admin_${kind}@example.test` }, { by: 'admin' }, server.gh.clock.now()));
      const byAdmin = await user(u.id);
      assert.deepEqual([byAdmin.email, byAdmin.emailVerified], [`bea.admin_${kind}@example.test`, false]);
    });

    it('an expired, replaced, unknown or malformed link answers a clear page and changes nothing', async () => {
      const u = await server.createUser(`cy_${kind}`);
      const expired = await send(u.id, `cy.old_${kind}@example.test`, server.gh.clock.now() - VERIFY_EMAIL_TTL_MS - 1000);
      const replaced = await send(u.id, `cy.one_${kind}@example.test`);
      await send(u.id, `cy.two_${kind}@example.test`);
      for (const path of [`${expired.pathname}${expired.search}`, `${replaced.pathname}${replaced.search}`, '/account/verify-email?token=not-a-token',
        '/account/verify-email', `/account/verify-email?token=${'a'.repeat(5000)}`, `${replaced.pathname}${replaced.search}&token=x`]) {
        const res = await new Agent(server.url).get(path);
        assert.equal(res.status, 400, path.slice(0, 80));
        assert.match(await res.text(), /This link does not work/);
      }
      const after = await user(u.id);
      assert.equal(after.email, `cy_${kind}@example.test`);
      assert.equal(after.emailVerified, false);
      assert.deepEqual(await events('user.email_verified', u.id), []);
      // The purge (src/server.ts) deletes the expired link only.
      const mine = async () => (await links(server)).filter((l) => l.user_id === u.id).map((l) => l.email).sort();
      assert.deepEqual(await mine(), [`cy.old_${kind}@example.test`, `cy.one_${kind}@example.test`, `cy.two_${kind}@example.test`]);
      assert.ok((await server.gh.storage.emailVerifications.deleteExpired(server.gh.clock.now())) >= 1);
      assert.deepEqual(await mine(), [`cy.one_${kind}@example.test`, `cy.two_${kind}@example.test`]);
    });

    it('the same link followed twice at once works exactly once', async () => {
      const u = await server.createUser(`dee_${kind}`);
      const link = await send(u.id, `dee.new_${kind}@example.test`);
      const answers = await Promise.all(Array.from({ length: 6 }, () => follow(link)));
      assert.deepEqual(answers.map((r) => r.status).sort(), [200, 400, 400, 400, 400, 400]);
      assert.equal((await events('user.email_verified', u.id)).length, 1);
      assert.equal((await events('user.updated', u.id)).length, 1);
    });

    it('email_verified beside email in the ID token, UserInfo and /user', async () => {
      const eve = await person(server, `eve_${kind}`);
      const client = await server.createClient({ redirectUris: ['https://rp.example.test/callback'], scope: 'openid email profile', trusted: true });
      const config = await relyingParty(server, client.id, client.secret);
      const claims = JSON.stringify({ id_token: { email: null } });
      const check = async (verified: boolean) => {
        const { tokens } = await signIn(config, new Agent(server.url), eve, 'openid email', { claims });
        const id = tokens.claims()!;
        assert.equal(id.email, eve.email);
        assert.equal(id.email_verified, verified);
        const info = await oidc.fetchUserInfo(config, tokens.access_token, eve.id);
        assert.deepEqual([info.email, info.email_verified], [eve.email, verified]);
        const profile = await callUser(server.apiUrl, { token: tokens.access_token });
        assert.equal(profile.status, 200);
        assert.deepEqual(profile.body, { username: eve.username, email: eve.email, email_verified: verified });
      };
      await check(false);
      assert.equal((await follow(await send(eve.id, eve.email))).status, 200);
      await check(true);
      const discovery = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as { claims_supported: string[] };
      assert.ok(discovery.claims_supported.includes('email_verified'));
    });
  });
}

describe('e-mail verification with e-mail off', () => {
  it('makes no link and says nothing was sent', async () => {
    const server = await startServer();
    try {
      const u = await server.createUser('fay');
      const started = await server.gh.storage.transaction(async (tx) =>
        startEmailVerification(server.gh.mailer, tx, (await tx.users.get(u.id))!, 'fay.new@example.test', server.gh.clock.now()));
      assert.equal(started.sent, false);
      assert.deepEqual(await links(server), []);
    } finally {
      await server.close();
    }
  });
});
