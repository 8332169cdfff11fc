// A lock leaves no intruder inside (issue 24, finding 2; src/core/account-lock.ts): whichever way the
// account is locked — "Not me" on a sign-in approval, "Lock my account", the console, `gatehouse user
// lock` — the session someone already holds gets no code and meets the login page, its refresh tokens
// answer invalid_grant, a code issued before is not exchanged, its opaque and JWT access tokens are
// inactive at introspection and refused by /user; after an unlock the person signs in again, and the
// old session and tokens stay dead. On SQLite, PostgreSQL and with sessions in Redis.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APPROVAL_TTL_MS } from '../../src/core/mfa/approval.js';
import { generateSecretKey } from '../../src/core/secret-box.js';
import { Agent } from '../helpers/agent.js';
import { issueCode, pkce, REDIRECT } from '../helpers/authorize.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds, type DbKind } from '../helpers/db.js';
import { dropRedisPrefix, freshRedisPrefix, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { BOT, linkedPerson as linkedChat, postForm, startChatServer, type ChatServer } from '../device/support.js';
import { csrfOf, signedInAdmin, submit } from '../console/support.js';

type Client = { id: string; secret: string | undefined };
type Tokens = { access_token: string; refresh_token: string };
type LinkedPerson = { chatId: string; browser: Agent; user: { id: string; username: string; password: string } };

const variants: { name: string; kind: DbKind; redis: boolean; skip: string | false }[] = [];
for (const { kind, skip } of await databaseKinds()) variants.push({ name: kind, kind, redis: false, skip });
variants.push({ name: 'sqlite, sessions in Redis', kind: 'sqlite', redis: true, skip: (await redisAvailable()) ? false : 'Redis not reachable' });

for (const v of variants) {
  describe(`a lock ends every session and token of the account (${v.name})`, { skip: v.skip, timeout: 120_000 }, () => {
    let server: ChatServer;
    let jwtApp: Client;
    let opaqueApp: Client;
    let resourceServer: Client;
    let admin: Agent;
    let n = 0;
    const prefix = freshRedisPrefix();
    const secretKey = generateSecretKey().toString('base64');
    // A file, not memory, so `gatehouse user lock|unlock` opens the server's database.
    const dir = mkdtempSync(join(tmpdir(), 'gh-lock-'));
    let databaseUrl = '';
    const env = () => ({
      GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_SECRET_KEY: secretKey,
      ...(v.redis ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}),
    });

    before(async () => {
      const file: Record<string, string> = v.kind === 'sqlite' ? { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}` } : {};
      server = await startChatServer(v.kind, { ...file, GATEHOUSE_SECRET_KEY: secretKey, ...(v.redis ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}) });
      const apps = { grantTypes: ['authorization_code', 'refresh_token'], scope: 'user', trusted: true };
      databaseUrl = file.GATEHOUSE_DATABASE_URL ?? server.databaseUrl;
      jwtApp = await server.createClient({ name: 'JWT app', ...apps });
      opaqueApp = await server.createClient({ name: 'Opaque app', ...apps, tokenFormat: 'opaque' });
      resourceServer = await server.createClient({ name: 'Resource server', grantTypes: ['client_credentials'], redirectUris: [], introspect: true });
      admin = await signedInAdmin(server, 'root');
    });
    after(async () => {
      await server?.close();
      if (v.redis) await dropRedisPrefix(prefix);
      rmSync(dir, { recursive: true, force: true });
    });

    /** A person signed in in a browser whose chat with the notification bot is linked (device/support.ts), and that chat's id. */
    async function linkedPerson(srv: ChatServer, username: string): Promise<LinkedPerson> {
      const p = await linkedChat(srv, username);
      return { chatId: String((await p.chat.send(BOT, 'hi')).chat.id), browser: p.browser, user: p.user };
    }

    const token = (fields: Record<string, string>, app: Client) => postForm(`${server.url}/oauth/token`, fields, app);
    const exchange = async (agent: Agent, app: Client): Promise<Tokens> => {
      const { code, verifier } = await issueCode(agent, app.id);
      const r = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, app);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body as Tokens;
    };
    const introspect = async (t: string) => (await postForm(`${server.url}/oauth/check_token`, { token: t }, resourceServer)).body;
    const user = (t: string) => fetch(`${server.apiUrl}/user`, { headers: { authorization: `Bearer ${t}` } });
    /** Where the authorization endpoint sends this browser: a code back to the app, or the login page. */
    const authorizeGoesTo = async (agent: Agent): Promise<string> => {
      const { challenge } = pkce();
      const q = new URLSearchParams({ response_type: 'code', client_id: jwtApp.id, redirect_uri: REDIRECT, state: 's', code_challenge: challenge, code_challenge_method: 'S256' });
      const res = await agent.get(`/oauth2?${q}`);
      const to = new URL(res.headers.get('location') ?? 'about:blank', server.url);
      return to.searchParams.has('code') ? 'code' : to.pathname;
    };

    /** What the intruder holds before the lock: a session, a code not yet exchanged, and tokens of both formats. */
    async function intruderOf(person: LinkedPerson) {
      const agent = new Agent(server.url);
      assert.equal((await agent.login(person.user.username, person.user.password)).status, 303);
      const jwt = await exchange(agent, jwtApp);
      const opaque = await exchange(agent, opaqueApp);
      const pending = await issueCode(agent, jwtApp.id);
      // Before the lock, all of it works.
      assert.equal((await introspect(jwt.access_token)).active, true);
      assert.equal((await introspect(opaque.access_token)).active, true);
      assert.equal((await user(jwt.access_token)).status, 200);
      assert.equal(await authorizeGoesTo(agent), 'code');
      return { agent, jwt, opaque, pending };
    }

    async function assertShutOut(person: LinkedPerson, intruder: Awaited<ReturnType<typeof intruderOf>>) {
      assert.equal(await authorizeGoesTo(intruder.agent), '/login', 'the old session gets no code: it meets the login page');
      assert.equal((await intruder.agent.get('/account')).status !== 200, true, 'the account page is closed to it');
      for (const [app, t] of [[jwtApp, intruder.jwt], [opaqueApp, intruder.opaque]] as const) {
        const r = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token }, app);
        assert.equal(r.body.error, 'invalid_grant', `refresh at ${app.id}`);
        assert.equal((await introspect(t.access_token)).active, false, 'introspection: inactive');
        const res = await user(t.access_token);
        assert.equal(res.status, 401, '/user refuses it');
        assert.match(res.headers.get('www-authenticate') ?? '', /invalid_token/);
      }
      const late = await token({ grant_type: 'authorization_code', code: intruder.pending.code, redirect_uri: REDIRECT, code_verifier: intruder.pending.verifier }, jwtApp);
      assert.equal(late.body.error, 'invalid_grant', 'a code issued before the lock is not exchanged');
      assert.equal((await server.gh.storage.sessions.listForUser(person.user.id, Date.now())).length, 0, 'no session of the account is left');
      const retry = new Agent(server.url);
      assert.notEqual((await retry.login(person.user.username, person.user.password)).status, 303, 'a locked account cannot sign in');
    }

    async function unlockAndSignIn(person: LinkedPerson, intruder: Awaited<ReturnType<typeof intruderOf>>) {
      const r = await runCli(['user', 'unlock', '--username', person.user.username, '--json'], env());
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { id: person.user.id, username: person.user.username, locked: false, was_locked: true });
      const back = new Agent(server.url);
      assert.equal((await back.login(person.user.username, person.user.password)).status, 303, 'after the unlock the person signs in');
      const fresh = await exchange(back, jwtApp);
      assert.equal((await user(fresh.access_token)).status, 200);
      // What the intruder held stays dead.
      assert.equal(await authorizeGoesTo(intruder.agent), '/login');
      assert.equal((await token({ grant_type: 'refresh_token', refresh_token: intruder.jwt.refresh_token }, jwtApp)).body.error, 'invalid_grant');
      assert.equal((await introspect(intruder.jwt.access_token)).active, false);
      assert.equal((await introspect(intruder.opaque.access_token)).active, false);
      const events = await server.gh.storage.events.list({ type: 'user.unlocked', limit: 100 });
      assert.ok(events.some((e) => e.userId === person.user.id && (e.data as { unlocked_by: string }).unlocked_by === 'cli'));
    }

    const lockedBy = async (userId: string) =>
      (await server.gh.storage.events.list({ type: 'user.locked', limit: 100 })).filter((e) => e.userId === userId).map((e) => (e.data as { locked_by: string }).locked_by);

    it('"Not me" on a sign-in approval in chat', async () => {
      const person = await linkedPerson(server, `notme${++n}`);
      const intruder = await intruderOf(person);
      const chatId = person.chatId;
      const now = Date.now();
      const id = `notMeLockTest${String(n).padStart(3, '0')}`;
      await server.gh.mfa.store.putPending(`pending-${id}`, {
        userId: person.user.id, returnTo: '/account', userAgent: null, ip: '203.0.113.9', createdAt: now, expiresAt: now + 5 * 60_000,
        approval: { id, number: 42, choices: [17, 42, 63], chatId, messageId: null, state: 'waiting', expiresAt: now + APPROVAL_TTL_MS },
      });
      const outcome = await server.gh.chatActions.dispatch(`signin:${id}.n`, { chatId, messageId: undefined, now: Date.now() });
      assert.match(outcome.answer, /locked/);
      assert.deepEqual(await lockedBy(person.user.id), ['not_me']);
      await assertShutOut(person, intruder);
      await unlockAndSignIn(person, intruder);
    });

    it('"Lock my account" on a replayed refresh token', async () => {
      const person = await linkedPerson(server, `onetap${++n}`);
      const intruder = await intruderOf(person);
      // The replay the alert is about (its own family is revoked by the replay; the others are not).
      const stolen = await exchange(person.browser, jwtApp);
      assert.equal((await token({ grant_type: 'refresh_token', refresh_token: stolen.refresh_token }, jwtApp)).status, 200);
      assert.equal((await token({ grant_type: 'refresh_token', refresh_token: stolen.refresh_token }, jwtApp)).body.error, 'invalid_grant');
      const replay = (await server.gh.storage.events.list({ type: 'refresh_token.reuse_detected', limit: 100 })).find((e) => e.userId === person.user.id);
      assert.ok(replay);
      const chatId = person.chatId;
      const outcome = await server.gh.chatActions.dispatch(`tap:lk:${replay.id}`, { chatId, messageId: undefined, now: Date.now() });
      assert.equal(outcome.answer, 'Account locked.');
      assert.deepEqual(await lockedBy(person.user.id), ['one_tap']);
      await assertShutOut(person, intruder);
      await unlockAndSignIn(person, intruder);
    });

    it('the console\'s Lock (and Unlock)', async () => {
      const person = await linkedPerson(server, `console${++n}`);
      const intruder = await intruderOf(person);
      const csrf = await csrfOf(admin, '/admin/users');
      const res = await submit(admin, `/admin/users/${person.user.id}/lock`, { csrf_token: csrf });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /is locked and signed out everywhere/);
      assert.deepEqual(await lockedBy(person.user.id), ['admin']);
      await assertShutOut(person, intruder);
      const unlocked = await submit(admin, `/admin/users/${person.user.id}/unlock`, { csrf_token: csrf });
      assert.match(await unlocked.text(), /can sign in again/);
      const back = new Agent(server.url);
      assert.equal((await back.login(person.user.username, person.user.password)).status, 303);
      assert.equal(await authorizeGoesTo(intruder.agent), '/login', 'the old session stays ended');
      const events = await server.gh.storage.events.list({ type: 'user.unlocked', limit: 100 });
      assert.ok(events.some((e) => e.userId === person.user.id && (e.data as { unlocked_by: string }).unlocked_by === 'admin'));
    });

    it('gatehouse user lock (and unlock); an unknown username is refused', async () => {
      const person = await linkedPerson(server, `cli${++n}`);
      const intruder = await intruderOf(person);
      const r = await runCli(['user', 'lock', '--username', person.user.username, '--json'], env());
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      assert.equal(out.id, person.user.id);
      assert.equal(out.locked, true);
      assert.ok((out.sessions_ended as number) >= 2, JSON.stringify(out));
      assert.ok((out.grants_revoked as number) >= 2, JSON.stringify(out));
      assert.deepEqual(await lockedBy(person.user.id), ['cli']);
      await assertShutOut(person, intruder);
      await unlockAndSignIn(person, intruder);
      const unknown = await runCli(['user', 'lock', '--username', 'nobody-here', '--json'], env());
      assert.equal(unknown.code, 1);
      assert.match(unknown.stderr, /no user nobody-here/);
    });
  });
}
