import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import { databaseKinds } from '../helpers/db.js';
import { Agent } from '../helpers/agent.js';
import { signedIn } from '../helpers/people.js';
import { createEndpoint } from '../../src/core/notify/endpoints.js';
import { csrfOf, open, signedInAdmin, submit } from './support.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';

const TOKEN = 'console-test-admin-token-0123456789';

for (const { kind, skip } of await databaseKinds()) describe(`admin console over HTTP (${kind})`, { skip, timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    // No worker: deliveries stay where the test puts them.
    server = await startServer({ db: kind, env: { GATEHOUSE_ROLES: 'auth', GATEHOUSE_ADMIN_TOKEN: TOKEN, GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
  });
  after(async () => server?.close());

  const adminEvents = async () => (await server.gh.storage.events.list({ type: 'admin.action', limit: 100 })).map((e) => e.data as Record<string, string>);

  it('the JSON admin API keeps its paths and answers: a bearer token or a non-HTML request gets the API', async () => {
    const list = await fetch(`${server.url}/admin/clients`, { headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/html' } });
    assert.equal(list.status, 200);
    assert.ok(Array.isArray(((await list.json()) as { clients: unknown[] }).clients));
    const bare = await fetch(`${server.url}/admin/clients`);
    assert.equal(bare.status, 401);
    assert.equal(((await bare.json()) as { error: string }).error, 'invalid_token');
    const rotate = await fetch(`${server.url}/admin/keys/rotate`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(rotate.status, 200);
    assert.equal(typeof ((await rotate.json()) as { kid: string }).kid, 'string');
    const wrong = await fetch(`${server.url}/admin/clients`, { headers: { authorization: 'Bearer wrong', accept: 'text/html' } });
    assert.equal(wrong.status, 401, 'a wrong token is the API\'s 401, never the console');
  });

  it('a browser that is not signed in is sent to the login page, and back afterwards', async () => {
    const agent = new Agent(server.url);
    const res = await open(agent, '/admin/users');
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), `/login?return_to=${encodeURIComponent('/admin/users')}`);
  });

  it('a signed-in person without --admin gets 403 on every page and every form', async () => {
    const person = await signedIn(server, 'mallory');
    for (const path of ['/admin', '/admin/clients', '/admin/users', '/admin/keys', '/admin/bots', '/admin/webhooks']) {
      const res = await open(person, path);
      assert.equal(res.status, 403, path);
      assert.match(await res.text(), /not one/);
    }
    const post = await submit(person, '/admin/keys/rotate', { csrf_token: 'x' });
    assert.equal(post.status, 403);
  });

  it('pages carry no-store, anti-framing and the pages\' CSP', async () => {
    const admin = await signedInAdmin(server, 'headers');
    for (const path of ['/admin', '/admin/clients', '/admin/users', '/admin/keys', '/admin/bots', '/admin/webhooks']) {
      const res = await open(admin, path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get('cache-control'), 'no-store', path);
      assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
      assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, path);
    }
  });

  it('every form refuses a POST without this session\'s CSRF token, and a body that is not a form', async () => {
    const admin = await signedInAdmin(server, 'csrf');
    const other = await signedInAdmin(server, 'csrf2');
    const foreign = await csrfOf(other);
    const client = await server.createClient({ name: 'Kept' });
    const before = (await server.gh.storage.keys.list()).length;
    for (const path of ['/admin/clients', `/admin/clients/${client.id}`, `/admin/clients/${client.id}/secret`, `/admin/clients/${client.id}/delete`, '/admin/keys/rotate',
      `/admin/users/${admin.user.id}/sessions/reset`]) {
      for (const fields of [{}, { csrf_token: 'forged' }, { csrf_token: foreign }] as Record<string, string>[]) {
        const res = await submit(admin, path, { ...fields, name: 'Forged', redirect_uris: 'https://evil.example/cb' });
        assert.equal(res.status, 403, `${path} ${JSON.stringify(fields)}`);
      }
    }
    const json = await admin.request('/admin/keys/rotate', { method: 'POST', headers: { accept: 'text/html', 'content-type': 'application/json' }, body: '{}' });
    assert.equal(json.status, 403);
    assert.ok(await server.gh.storage.clients.get(client.id), 'nothing was deleted');
    assert.equal((await server.gh.storage.keys.list()).length, before, 'nothing was rotated');
  });

  it('clients: create (secret shown once), edit redirect URIs and scope, refuse a bad URI, rotate the secret, delete; each an admin.action', async () => {
    const admin = await signedInAdmin(server, 'clients');
    const csrf = await csrfOf(admin);
    const created = await submit(admin, '/admin/clients', {
      csrf_token: csrf, name: 'Console app', redirect_uris: 'https://app.example.test/cb\nhttp://127.0.0.1:9000/cb', scope: 'user chat',
      grant_types: ['authorization_code', 'refresh_token'],
    });
    assert.equal(created.status, 201);
    const html = await created.text();
    const id = /client_id: ([\w-]+)/.exec(html)?.[1];
    const secret = /client_secret: ([\w-]+)/.exec(html)?.[1];
    assert.ok(id && secret);
    const stored = (await server.gh.storage.clients.get(id))!;
    assert.deepEqual(stored.redirectUris, ['https://app.example.test/cb', 'http://127.0.0.1:9000/cb']);
    // The secret works at the token endpoint (it is the admin API's createClient).
    const token = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials' });
    assert.equal(token.status, 400, 'authenticated, and refused only for the grant type');
    assert.equal(((await token.json()) as { error: string }).error, 'unauthorized_client');

    const edited = await submit(admin, `/admin/clients/${id}`, { csrf_token: csrf, redirect_uris: 'https://app.example.test/other', scope: 'user' });
    assert.equal(edited.status, 200);
    const after = (await server.gh.storage.clients.get(id))!;
    assert.deepEqual(after.redirectUris, ['https://app.example.test/other']);
    assert.deepEqual(after.scope, ['user']);

    for (const [uris, scope, why] of [['http://evil.example/cb', 'user', /https/], ['https://a.example/cb#x', 'user', /fragment/], ['', 'user', /at least one redirect URI/], ['https://a.example/cb', 'bad"scope', /scope/]] as const) {
      const bad = await submit(admin, `/admin/clients/${id}`, { csrf_token: csrf, redirect_uris: uris, scope });
      assert.equal(bad.status, 400, uris);
      assert.match(await bad.text(), why);
    }
    assert.deepEqual((await server.gh.storage.clients.get(id))!.redirectUris, ['https://app.example.test/other'], 'a refused edit changes nothing');

    const badCreate = await submit(admin, '/admin/clients', { csrf_token: csrf, name: '', redirect_uris: 'https://a.example/cb' });
    assert.equal(badCreate.status, 400);

    const rotated = await submit(admin, `/admin/clients/${id}/secret`, { csrf_token: csrf });
    assert.equal(rotated.status, 200);
    const newSecret = /client_secret: ([\w-]+)/.exec(await rotated.text())?.[1];
    assert.ok(newSecret && newSecret !== secret);

    const gone = await submit(admin, `/admin/clients/${id}/delete`, { csrf_token: csrf });
    assert.equal(gone.status, 303);
    assert.equal(await server.gh.storage.clients.get(id), undefined);
    assert.equal((await submit(admin, `/admin/clients/${id}/delete`, { csrf_token: csrf })).status, 404);
    assert.equal((await open(admin, `/admin/clients/${id}`)).status, 404);

    const actions = (await adminEvents()).filter((e) => e.target_id === id).map((e) => e.action);
    assert.deepEqual(actions.sort(), ['client.create', 'client.delete', 'client.rotate_secret', 'client.update']);
    assert.ok((await adminEvents()).every((e) => e.admin_username), 'each names the administrator');
  });

  it('users: lock (signed out, login refused), unlock, sign out everywhere', async () => {
    const admin = await signedInAdmin(server, 'users');
    const csrf = await csrfOf(admin, '/admin/users');
    const bob = await signedIn(server, 'bob');
    assert.equal((await open(bob, '/account')).status, 200);
    const list = await open(admin, '/admin/users?q=bo');
    assert.match(await list.text(), /bob@example\.test/);

    assert.equal((await submit(admin, `/admin/users/${bob.user.id}/lock`, { csrf_token: csrf })).status, 200);
    assert.equal((await open(bob, '/account')).status, 302, 'the session ended');
    const again = new Agent(server.url);
    const refused = await again.login('bob', bob.user.password);
    assert.equal(refused.status, 403);
    assert.match(await refused.text(), /locked/);

    // The password grant asks the same guard: no tokens for a locked account either.
    const pw = await server.createClient({ name: 'Password app', grantTypes: ['password'], redirectUris: [] });
    const grant = () => fetch(`${server.url}/oauth/token`, {
      method: 'POST', headers: { authorization: `Basic ${Buffer.from(`${pw.id}:${pw.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'password', username: 'bob', password: bob.user.password }),
    });
    const lockedGrant = await grant();
    assert.equal(lockedGrant.status, 400);
    assert.equal(((await lockedGrant.json()) as { error: string }).error, 'invalid_grant');

    assert.equal((await submit(admin, `/admin/users/${bob.user.id}/unlock`, { csrf_token: csrf })).status, 200);
    assert.equal((await grant()).status, 200, 'unlocked: the grant works again');
    assert.equal((await again.login('bob', bob.user.password)).status, 303);
    assert.equal((await open(again, '/account')).status, 200);

    assert.equal((await submit(admin, `/admin/users/${bob.user.id}/sessions/reset`, { csrf_token: csrf })).status, 200);
    assert.equal((await open(again, '/account')).status, 302, 'signed out everywhere');

    const self = await submit(admin, `/admin/users/${admin.user.id}/lock`, { csrf_token: csrf });
    assert.match(await self.text(), /cannot lock your own/);
    assert.equal(await server.gh.console.isLocked(admin.user.id), false);
    assert.equal((await submit(admin, '/admin/users/no-such-user/lock', { csrf_token: csrf })).status, 404);
    for (const q of ['?page=-1', '?page=abc', `?q=${'x'.repeat(500)}`, '?q=%25_%5C', '?page=1&page=2']) {
      assert.equal((await open(admin, `/admin/users${q}`)).status, 200, q);
    }
    const actions = (await adminEvents()).filter((e) => e.target_id === bob.user.id).map((e) => e.action);
    assert.deepEqual(actions.sort(), ['user.lock', 'user.reset_sessions', 'user.unlock']);
  });

  it('one user: sessions and allowed applications, each ended from the console; locking revokes refresh tokens', async () => {
    const admin = await signedInAdmin(server, 'grants');
    const csrf = await csrfOf(admin, '/admin/users');
    const carol = await signedIn(server, 'carol');
    const app = await server.createClient({ name: 'Carol app', redirectUris: [REDIRECT], scope: 'user' });
    const { code, verifier } = await issueCode(carol, app.id, { scope: 'user' });
    const basic = `Basic ${Buffer.from(`${app.id}:${app.secret}`).toString('base64')}`;
    const token = (body: Record<string, string>) => fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) });
    const tokens = (await (await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT })).json()) as { refresh_token: string };
    assert.ok(tokens.refresh_token);

    const page = await (await open(admin, `/admin/users/${carol.user.id}`)).text();
    assert.match(page, /Carol app/);
    const sid = /name="sid" value="([^"]+)"/.exec(page)?.[1];
    assert.ok(sid, 'the session is listed');

    assert.equal((await submit(admin, `/admin/users/${carol.user.id}/apps/remove`, { csrf_token: csrf, client_id: app.id })).status, 200);
    assert.equal((await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status, 400, 'the refresh token was revoked');
    assert.equal((await submit(admin, `/admin/users/${carol.user.id}/apps/remove`, { csrf_token: csrf, client_id: app.id })).status, 404);

    assert.equal((await submit(admin, `/admin/users/${carol.user.id}/sessions/end`, { csrf_token: csrf, sid })).status, 200);
    assert.equal((await open(carol, '/account')).status, 302, 'that session ended');
    for (const bad of ['', 'x'.repeat(300), sid]) {
      assert.equal((await submit(admin, `/admin/users/${carol.user.id}/sessions/end`, { csrf_token: csrf, sid: bad })).status, 404, bad.slice(0, 10));
    }
    assert.equal((await open(admin, '/admin/users/nobody')).status, 404);

    // Locking revokes what the account still holds, consented or not.
    const again = await issueCode(carol, app.id, { scope: 'user' }, { user: carol.user });
    const held = (await (await token({ grant_type: 'authorization_code', code: again.code, code_verifier: again.verifier, redirect_uri: REDIRECT })).json()) as { refresh_token: string };
    assert.equal((await submit(admin, `/admin/users/${carol.user.id}/lock`, { csrf_token: csrf })).status, 200);
    assert.equal((await token({ grant_type: 'refresh_token', refresh_token: held.refresh_token })).status, 400);
    const actions = (await adminEvents()).filter((e) => e.target_id === carol.user.id).map((e) => e.action);
    assert.deepEqual(actions.sort(), ['user.end_session', 'user.lock', 'user.remove_app']);
  });

  it('signing keys: the page lists what is published; rotating changes the JWKS the way the API does', async () => {
    const admin = await signedInAdmin(server, 'keys');
    const csrf = await csrfOf(admin, '/admin/keys');
    const before = ((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    const res = await submit(admin, '/admin/keys/rotate', { csrf_token: csrf });
    assert.equal(res.status, 200);
    const page = await res.text();
    const jwks = ((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    const added = jwks.filter((k) => !before.includes(k));
    assert.equal(added.length, 2, 'an ES256 and an RS256 key');
    for (const kid of [...added, ...before]) assert.ok(page.includes(kid), `the page lists ${kid}`);
    assert.ok(before.every((k) => jwks.includes(k)), 'the old keys stay published');
  });

  it('webhooks: deliveries, dead letters and replay, enable and disable', async () => {
    const admin = await signedInAdmin(server, 'hooks');
    const csrf = await csrfOf(admin, '/admin/keys');
    const events = server.gh.storage.events;
    const endpoint = await createEndpoint(events, server.gh.clock, { url: 'http://127.0.0.1:9/in', events: ['client.created'] }, { checkUrl: server.gh.outbound.registered.check });
    await server.createClient({ name: 'Makes an event' });
    const pending = await events.deliveries.list(endpoint.id, { limit: 10 });
    assert.equal(pending.length, 1);
    // Disabling fails what is pending: a dead letter.
    assert.equal((await submit(admin, `/admin/webhooks/${endpoint.id}/disable`, { csrf_token: csrf })).status, 200);
    const [dead] = await events.deliveries.list(endpoint.id, { limit: 10 });
    assert.equal(dead!.status, 'failed');
    const page = await (await open(admin, `/admin/webhooks/${endpoint.id}?status=failed`)).text();
    assert.ok(page.includes(dead!.eventId));
    assert.match(await (await open(admin, '/admin/webhooks')).text(), /127\.0\.0\.1:9\/in/);

    assert.equal((await submit(admin, `/admin/webhooks/${endpoint.id}/enable`, { csrf_token: csrf })).status, 200);
    const replay = await submit(admin, `/admin/webhooks/${endpoint.id}/replay`, { csrf_token: csrf, window: '86400' });
    assert.equal(replay.status, 200);
    assert.match(await replay.text(), /1 failed message will be sent again/);
    assert.equal((await events.deliveries.list(endpoint.id, { limit: 10 }))[0]!.status, 'pending');

    await submit(admin, `/admin/webhooks/${endpoint.id}/disable`, { csrf_token: csrf });
    const resend = await submit(admin, `/admin/webhooks/${endpoint.id}/messages/${dead!.eventId}/resend`, { csrf_token: csrf });
    assert.equal(resend.status, 200);
    assert.equal((await events.deliveries.list(endpoint.id, { limit: 10 }))[0]!.status, 'pending');

    for (const window of ['', '5', 'forever']) {
      assert.equal((await submit(admin, `/admin/webhooks/${endpoint.id}/replay`, { csrf_token: csrf, window })).status, 400, window);
    }
    assert.equal((await submit(admin, `/admin/webhooks/${endpoint.id}/messages/nope/resend`, { csrf_token: csrf })).status, 404);
    assert.equal((await open(admin, '/admin/webhooks/nope')).status, 404);
    const actions = (await adminEvents()).filter((e) => e.target_id?.startsWith(endpoint.id)).map((e) => e.action);
    assert.deepEqual(actions.sort(), ['webhook.disable', 'webhook.disable', 'webhook.enable', 'webhook.replay', 'webhook.resend']);
  });

  it('bots: the list', async () => {
    const admin = await signedInAdmin(server, 'bots');
    const res = await open(admin, '/admin/bots');
    assert.equal(res.status, 200);
    assert.match(await res.text(), /Bots/);
  });
});
