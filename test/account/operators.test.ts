// Operators manage accounts (issue 26, item 6): `gatehouse user list | set-password | delete`, the
// same in the admin API (GET /admin/users, PATCH /admin/users/:id, POST /admin/users/:id/password,
// DELETE /admin/users/:id). A new password ends every session and revokes every refresh token;
// deletion removes the personal data (second factors, consents, the linked chat, third-party links,
// pending sign-ins) and records user.deleted. On SQLite (a file, so the command line opens the
// server's database) and PostgreSQL.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSecretKey } from '../../src/core/secret-box.js';
import { Agent } from '../helpers/agent.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/db.js';
import { linkedPerson, postForm, startChatServer, type ChatServer } from '../device/support.js';

const ADMIN_TOKEN = 'operators-test-admin-token-0123456789';

for (const { kind, skip } of await databaseKinds()) {
  describe(`operators manage accounts (${kind})`, { skip, timeout: 120_000 }, () => {
    let server: ChatServer;
    let app: { id: string; secret: string | undefined };
    const secretKey = generateSecretKey().toString('base64');
    const dir = mkdtempSync(join(tmpdir(), 'gh-operators-'));
    let databaseUrl = '';
    const env = () => ({ GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: secretKey });
    const admin = (path: string, init: RequestInit = {}) => fetch(`${server.url}/admin${path}`, {
      ...init, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    });

    before(async () => {
      const file: Record<string, string> = kind === 'sqlite' ? { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}` } : {};
      server = await startChatServer(kind, { ...file, GATEHOUSE_SECRET_KEY: secretKey, GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN });
      databaseUrl = file.GATEHOUSE_DATABASE_URL ?? server.databaseUrl;
      app = await server.createClient({ name: 'Notes', grantTypes: ['authorization_code', 'refresh_token'], scope: 'user', trusted: true });
    });
    after(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A browser signed in, and a refresh token it got for the app. */
    async function signedInWithToken(username: string, password: string) {
      const browser = new Agent(server.url);
      assert.equal((await browser.login(username, password)).status, 303);
      const { code, verifier } = await issueCode(browser, app.id);
      const t = await postForm(`${server.url}/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, app);
      assert.equal(t.status, 200, JSON.stringify(t.body));
      return { browser, refresh: (t.body as { refresh_token: string }).refresh_token };
    }
    const refreshes = async (refresh: string) => (await postForm(`${server.url}/oauth/token`, { grant_type: 'refresh_token', refresh_token: refresh }, app)).body as Record<string, unknown>;
    const signedOut = async (browser: Agent) => (await browser.get('/account')).status !== 200;

    it('gatehouse user list, set-password (sessions ended, refresh tokens revoked), delete', async () => {
      const ana = await server.createUser('ana');
      await server.gh.console.setAdmin(ana.id, true);
      const list = await runCli(['user', 'list', '--json'], env());
      assert.equal(list.code, 0, list.stderr);
      const users = (JSON.parse(list.stdout) as { users: Record<string, unknown>[] }).users;
      const row = users.find((u) => u.username === 'ana');
      assert.deepEqual(Object.keys(row!).sort(), ['admin', 'created_at', 'email', 'email_verified', 'id', 'locked', 'name', 'username']);
      assert.equal(row!.id, ana.id);
      assert.equal(row!.admin, true);
      assert.equal(row!.locked, false);
      assert.equal(row!.email, 'ana@example.test');

      const before = await signedInWithToken('ana', ana.password);
      const weak = await runCli(['user', 'set-password', '--username', 'ana', '--password-stdin', '--json'], env(), 'short\n');
      assert.equal(weak.code, 1);
      assert.match(weak.stderr, /at least 8 characters/);
      const set = await runCli(['user', 'set-password', '--username', 'ana', '--password-stdin', '--json'], env(), 'a brand new passphrase 42\n');
      assert.equal(set.code, 0, set.stderr);
      const out = JSON.parse(set.stdout) as Record<string, unknown>;
      assert.equal(out.id, ana.id);
      assert.ok((out.sessions_ended as number) >= 1 && (out.grants_revoked as number) >= 1, set.stdout);
      assert.ok(await signedOut(before.browser), 'the browser signed in before is signed out');
      assert.equal((await refreshes(before.refresh)).error, 'invalid_grant');
      assert.notEqual((await new Agent(server.url).login('ana', ana.password)).status, 303, 'the old password no longer works');
      assert.equal((await new Agent(server.url).login('ana', 'a brand new passphrase 42')).status, 303);
      const changed = await server.gh.storage.events.list({ type: 'user.password_changed', limit: 10 });
      assert.ok(changed.some((e) => e.userId === ana.id && (e.data as { changed_by: string }).changed_by === 'cli'));

      const del = await runCli(['user', 'delete', '--username', 'ana', '--json'], env());
      assert.equal(del.code, 0, del.stderr);
      assert.deepEqual(JSON.parse(del.stdout), { id: ana.id, username: 'ana', deleted: true, grants_revoked: 0 });
      assert.equal(await server.gh.storage.users.get(ana.id), undefined);
      const again = await runCli(['user', 'delete', '--username', 'ana', '--json'], env());
      assert.equal(again.code, 1);
      assert.match(again.stderr, /no user ana/);
    });

    it('the admin API: list, PATCH name and e-mail, a new password, delete; bad input is 400, an unknown id 404', async () => {
      const bo = await server.createUser('bo');
      const list = await admin('/users?search=bo%40');
      assert.equal(list.status, 200);
      assert.deepEqual((await list.json() as { users: { username: string }[] }).users.map((u) => u.username), ['bo']);
      const patched = await admin(`/users/${bo.id}`, { method: 'PATCH', body: JSON.stringify({ name: 'Bo Berg', email: 'bo@new.example.test' }) });
      assert.equal(patched.status, 200);
      const p = await patched.json() as Record<string, unknown>;
      assert.equal(p.name, 'Bo Berg');
      assert.equal(p.email, 'bo@new.example.test');
      const updated = (await server.gh.storage.events.list({ type: 'user.updated', limit: 10 })).find((e) => e.userId === bo.id);
      assert.deepEqual((updated!.data as { fields: string[] }).fields, ['name', 'email']);
      assert.equal((await admin(`/users/${bo.id}`, { method: 'PATCH', body: JSON.stringify({ email: 'not an address' }) })).status, 400);
      assert.equal((await admin('/users/nobody', { method: 'PATCH', body: JSON.stringify({ name: 'X' }) })).status, 404);

      const before = await signedInWithToken('bo', bo.password);
      const weak = await admin(`/users/${bo.id}/password`, { method: 'POST', body: JSON.stringify({ password: 'password' }) });
      assert.equal(weak.status, 400);
      assert.equal((await weak.json() as { error: string }).error, 'invalid_request');
      const set = await admin(`/users/${bo.id}/password`, { method: 'POST', body: JSON.stringify({ password: 'another long passphrase 7' }) });
      assert.equal(set.status, 200);
      assert.ok(await signedOut(before.browser));
      assert.equal((await refreshes(before.refresh)).error, 'invalid_grant');
      const actions = (await server.gh.storage.events.list({ type: 'admin.action', limit: 50 })).map((e) => (e.data as { action: string; target_id: string }));
      assert.ok(actions.some((a) => a.action === 'user.set_password' && a.target_id === bo.id));
      assert.ok(actions.some((a) => a.action === 'user.update' && a.target_id === bo.id));

      const del = await admin(`/users/${bo.id}`, { method: 'DELETE' });
      assert.equal(del.status, 200);
      assert.deepEqual(await del.json(), { id: bo.id, username: 'bo', deleted: true, grants_revoked: 0 });
      assert.equal((await admin(`/users/${bo.id}`, { method: 'DELETE' })).status, 404);
      assert.equal((await fetch(`${server.url}/admin/users`)).status, 401);
    });

    it('deletion removes the personal data, tells the apps and records user.deleted with the id and username only', async () => {
      const person = await linkedPerson(server, 'cy');
      const id = person.user.id;
      const gh = server.gh;
      await gh.mfa.store.startTotp(id, 'JBSWY3DPEHPK3PXP', Date.now());
      await gh.mfa.store.setRecoveryCodes(id, ['hash-1', 'hash-2'], Date.now());
      await gh.storage.consents.grant(id, app.id, ['user'], Date.now());
      const tokens = await signedInWithToken('cy', person.user.password);
      assert.equal((await gh.storage.events.endpoints.list({ userId: id })).length, 1, 'the linked chat');
      const del = await admin(`/users/${id}`, { method: 'DELETE' });
      assert.equal(del.status, 200);
      assert.equal(await gh.storage.users.get(id), undefined);
      assert.equal(await gh.mfa.store.getTotp(id), undefined);
      assert.equal(await gh.mfa.store.recoveryCodesLeft(id), 0);
      assert.equal(await gh.storage.consents.get(id, app.id), undefined);
      assert.equal((await gh.storage.events.endpoints.list({ userId: id })).length, 0, 'the linked chat is unlinked');
      assert.equal((await gh.storage.sessions.listForUser(id, Date.now())).length, 0);
      assert.ok(await signedOut(person.browser));
      assert.ok(await signedOut(tokens.browser));
      assert.equal((await refreshes(tokens.refresh)).error, 'invalid_grant');
      assert.notEqual((await new Agent(server.url).login('cy', person.user.password)).status, 303);
      const deleted = (await gh.storage.events.list({ type: 'user.deleted', limit: 10 })).find((e) => e.userId === id);
      assert.deepEqual(deleted!.data, { user_id: id, username: 'cy', ip: '127.0.0.1', deleted_by: 'api' });
    });
  });
}
