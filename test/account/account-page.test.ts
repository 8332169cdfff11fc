import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { TestClock } from '../helpers/clock.js';
import { databaseKinds } from '../helpers/db.js';
import { dropRedisPrefix, freshRedisPrefix, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SmtpSink } from '../mail/support.js';
import type { SqlStorage } from '../../src/store/index.js';

const PASSWORD = 'correct horse battery staple';
const NEW_PASSWORD = 'a quite different passphrase 7';
/** Past GATEHOUSE_REAUTH_WINDOW (600 s by default). */
const STALE_MS = 11 * 60_000;

/** The account page's CSRF token (every form of the page carries the same one). */
async function csrf(agent: Agent): Promise<string> {
  const res = await agent.get('/account');
  assert.equal(res.status, 200);
  const token = /name="csrf_token" value="([^"]+)"/.exec(await res.text())?.[1];
  assert.ok(token);
  return token;
}

async function post(agent: Agent, path: string, fields: Record<string, string>): Promise<Response> {
  return agent.post(path, { csrf_token: await csrf(agent), ...fields });
}

async function signIn(server: TestServer, username: string, password = PASSWORD): Promise<Agent> {
  const agent = new Agent(server.url);
  assert.equal((await agent.login(username, password)).status, 303, `sign-in of ${username}`);
  return agent;
}

/** A refresh token through the password grant (RFC 6749 §4.3), and a way to try it later. */
async function refreshTokenOf(server: TestServer, client: { id: string; secret: string | undefined }, username: string) {
  const basic = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
  const token = (body: Record<string, string>) => fetch(`${server.url}/oauth/token`, {
    method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString(),
  });
  const res = await token({ grant_type: 'password', username, password: PASSWORD, scope: 'user offline_access' });
  assert.equal(res.status, 200);
  const { refresh_token } = (await res.json()) as { refresh_token: string };
  assert.ok(refresh_token);
  return async () => {
    const r = await token({ grant_type: 'refresh_token', refresh_token });
    return { status: r.status, error: ((await r.json()) as { error?: string }).error };
  };
}

function suite(label: string, opts: { db: 'sqlite' | 'postgres'; skip: string | false; redis?: boolean }) {
  describe(`the account page: ${label}`, { skip: opts.skip }, () => {
    let server: TestServer;
    let sink: SmtpSink;
    let prefix: string | undefined;
    let client: { id: string; secret: string | undefined };
    const clock = new TestClock();
    const events = async (type: 'user.updated' | 'user.password_changed' | 'user.deleted' | 'user.email_verified', userId: string) =>
      (await server.gh.storage.events.list({ type, limit: 100 })).filter((e) => e.userId === userId).map((e) => e.data as Record<string, unknown>);

    before(async () => {
      sink = await new SmtpSink().start();
      prefix = opts.redis ? freshRedisPrefix() : undefined;
      server = await startServer({
        db: opts.db, clock,
        env: { GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`, ...(prefix ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}) },
      });
      const c = await server.createClient({ name: 'Notes', grantTypes: ['password', 'refresh_token'], redirectUris: [], scope: 'user offline_access' });
      client = { id: c.id, secret: c.secret };
    });
    after(async () => {
      await server.close();
      await sink.stop();
      if (prefix) await dropRedisPrefix(prefix);
    });

    it('changing the password: the current one is required; then every other browser and refresh token is out, this browser stays', async () => {
      const u = await server.createUser(`pat_${label.length}`);
      const other = await signIn(server, u.username);
      const refresh = await refreshTokenOf(server, client, u.username);
      const me = await signIn(server, u.username);

      const wrong = await post(me, '/account/password', { current_password: 'not my password', new_password: NEW_PASSWORD });
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /That password is not right. Nothing was changed./);
      const weak = await post(me, '/account/password', { current_password: PASSWORD, new_password: 'short' });
      assert.equal(weak.status, 400);
      assert.match(await weak.text(), /at least 8 characters/);
      assert.equal((await other.get('/account')).status, 200, 'nothing changed yet');

      const sent = sink.received.length;
      const done = await post(me, '/account/password', { current_password: PASSWORD, new_password: NEW_PASSWORD });
      assert.deepEqual([done.status, done.headers.get('location')], [303, '/account?done=password']);
      const page = await me.get('/account?done=password');
      assert.equal(page.status, 200, 'this browser stays signed in (a new session)');
      assert.match(await page.text(), /Your password is changed/);
      assert.equal((await other.get('/account')).status, 302, 'the other browser is signed out');
      assert.deepEqual(await refresh(), { status: 400, error: 'invalid_grant' });
      assert.equal((await new Agent(server.url).login(u.username, PASSWORD)).status, 401);
      assert.equal((await new Agent(server.url).login(u.username, NEW_PASSWORD)).status, 303);
      assert.deepEqual((await events('user.password_changed', u.id)).map((d) => d.changed_by), ['self']);
      const notice = (await sink.waitFor(sent + 1))[sent]!;
      assert.deepEqual(notice.rcptTo, [`${u.username}@example.test`]);
    });

    it('guesses of the current password are throttled like sign-in, even in parallel', async () => {
      const u = await server.createUser(`guess_${label.length}`);
      const me = await signIn(server, u.username);
      const token = await csrf(me);
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) =>
        me.post('/account/password', { csrf_token: token, current_password: `guess number ${i}`, new_password: NEW_PASSWORD })));
      const statuses = answers.map((r) => r.status);
      assert.ok(statuses.filter((s) => s === 401).length <= 5, `at most 5 checked: ${statuses.join(',')}`);
      assert.ok(statuses.includes(429), statuses.join(','));
      // Now even the right one is refused until the window ends, and nothing changed.
      const right = await me.post('/account/password', { csrf_token: token, current_password: PASSWORD, new_password: NEW_PASSWORD });
      assert.equal(right.status, 429);
      assert.ok(right.headers.get('retry-after'));
      assert.deepEqual(await events('user.password_changed', u.id), []);
    });

    it('the name, and the e-mail address by link only; a stale session is asked for its password first', async () => {
      const u = await server.createUser(`nia_${label.length}`);
      const me = await signIn(server, u.username);
      const named = await post(me, '/account/name', { name: 'Nia Example' });
      assert.deepEqual([named.status, named.headers.get('location')], [303, '/account?done=name']);
      assert.equal((await server.gh.storage.users.get(u.id))!.name, 'Nia Example');
      assert.deepEqual((await events('user.updated', u.id)).map((d) => d.fields), [['name']]);

      clock.advance(STALE_MS);
      const asked = await post(me, '/account/email', { email: `nia.new_${label.length}@example.test` });
      assert.equal(asked.status, 403);
      const form = await asked.text();
      assert.match(form, /Confirm it is you/);
      assert.match(form, /name="email" value="nia\.new_/, 'the change is carried over');
      const sent = sink.received.length;
      const proven = await me.post('/account/email', {
        csrf_token: /name="csrf_token" value="([^"]+)"/.exec(form)![1]!, email: `nia.new_${label.length}@example.test`, password: PASSWORD,
      });
      assert.deepEqual([proven.status, proven.headers.get('location')], [303, '/account?done=email']);
      assert.match(await (await me.get('/account?done=email')).text(), /We sent a link to the new address/);
      assert.equal((await server.gh.storage.users.get(u.id))!.email, `${u.username}@example.test`, 'the old address stands until the link is followed');
      const mail = (await sink.waitFor(sent + 1))[sent]!;
      const link = new URL(/https?:\/\/\S+\/account\/verify-email\?token=[\w-]+/.exec(mail.text)![0]);
      assert.equal((await me.get(`${link.pathname}${link.search}`)).status, 200);
      const after = (await server.gh.storage.users.get(u.id))!;
      assert.deepEqual([after.email, after.emailVerified], [`nia.new_${label.length}@example.test`, true]);
      assert.match(await (await me.get('/account')).text(), /id="email-status">Confirmed/);
      assert.equal((await me.get(`${link.pathname}${link.search}`)).status, 400, 'a link works once');
    });

    it('deleting the account: the password, then a confirmation; then no sign-in, no tokens, user.deleted', async () => {
      const u = await server.createUser(`del_${label.length}`);
      const refresh = await refreshTokenOf(server, client, u.username);
      const other = await signIn(server, u.username);
      const me = await signIn(server, u.username);
      assert.equal((await post(me, '/account/email', { email: `del.new_${label.length}@example.test` })).status, 303, 'a pending link to erase');
      const linksOf = () => (server.gh.storage as unknown as SqlStorage).database.db.selectFrom('email_verifications').selectAll().where('user_id', '=', u.id).execute();
      assert.equal((await linksOf()).length, 1);
      const wrong = await post(me, '/account/delete', { password: 'not it' });
      assert.equal(wrong.status, 401);
      const confirm = await post(me, '/account/delete', { password: PASSWORD });
      assert.equal(confirm.status, 200);
      const page = await confirm.text();
      assert.match(page, /Delete your account\?/);
      assert.ok(await server.gh.storage.users.get(u.id), 'not deleted before the confirmation');
      // The account page's own token does not confirm: only the confirmation page's does.
      assert.equal((await me.post('/account/delete/confirm', { csrf_token: await csrf(me), confirm: 'delete' })).status, 403);
      const done = await me.post('/account/delete/confirm', { csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page)![1]!, confirm: 'delete' });
      assert.deepEqual([done.status, done.headers.get('location')], [303, '/account/deleted']);
      assert.match(await (await me.get('/account/deleted')).text(), /Your account is deleted/);
      assert.equal(await server.gh.storage.users.get(u.id), undefined);
      assert.deepEqual(await linksOf(), [], 'its e-mail links (addresses) are gone too');
      assert.equal((await me.get('/account')).status, 302);
      assert.equal((await other.get('/account')).status, 302);
      assert.equal((await new Agent(server.url).login(u.username, PASSWORD)).status, 401);
      assert.deepEqual(await refresh(), { status: 400, error: 'invalid_grant' });
      assert.deepEqual((await events('user.deleted', u.id)).map((d) => [d.username, d.deleted_by]), [[u.username, 'self']]);
    });

    it('forms without the page\'s CSRF token are refused', async () => {
      const u = await server.createUser(`csrf_${label.length}`);
      const me = await signIn(server, u.username);
      for (const [path, fields] of [['/account/name', { name: 'X' }], ['/account/email', { email: 'x@example.test' }],
        ['/account/password', { current_password: PASSWORD, new_password: NEW_PASSWORD }], ['/account/delete', { password: PASSWORD }]] as const) {
        assert.equal((await me.post(path, { csrf_token: 'forged', ...fields })).status, 403, path);
      }
      assert.equal((await server.gh.storage.users.get(u.id))!.name, null);
    });
  });
}

for (const { kind, skip } of await databaseKinds()) suite(kind, { db: kind, skip });
const redis = await redisAvailable();
suite('sqlite with sessions in Redis', { db: 'sqlite', skip: redis ? false : 'Redis is not reachable', redis: true });
