import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { signedIn, type SignedIn } from '../helpers/people.js';
import type { Kysely } from 'kysely';
import { DEVICE_GRANT_TYPE } from '../../src/core/oauth/device.js';
import type { SqlStorage } from '../../src/store/index.js';
import type { DB } from '../../src/store/schema.js';
import { buttonsOf, lastId, linkedPerson, nextMessage, postForm, press, startChatServer, type ChatServer } from './support.js';

const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

/** The person's part on /device: type the code, then decide on the consent page. */
async function enterCode(browser: Agent, userCode: string): Promise<{ status: number; form?: ReturnType<typeof parseForm>; body: string }> {
  const page = await browser.get(`/device?user_code=${encodeURIComponent(userCode)}`);
  assert.equal(page.status, 200);
  const form = parseForm(await page.text());
  const res = await browser.post(form.action, { ...form.fields, user_code: userCode });
  const body = await res.text();
  return { status: res.status, body, ...(res.status === 200 ? { form: parseForm(body) } : {}) };
}

async function decide(browser: Agent, userCode: string, approve: boolean): Promise<number> {
  const consent = await enterCode(browser, userCode);
  assert.equal(consent.status, 200, consent.body);
  assert.equal(consent.form!.action, '/device/decision');
  const res = await browser.post(consent.form!.action, { ...consent.form!.fields, approve: String(approve) });
  return res.status;
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`device authorization grant, RFC 8628 (${kind})`, { skip }, () => {
    let server: ChatServer;
    let alice: SignedIn;
    let tv: { id: string; secret: string | undefined };
    let cli: { id: string; secret: string | undefined };
    let rp: oidc.Configuration;
    const endpoint = () => `${server.url}/oauth/device_authorization`;
    const token = () => `${server.url}/oauth/token`;
    const start = async (c = tv, scope = 'openid user') => {
      const r = await postForm(endpoint(), { scope }, c);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
    };
    const poll = (deviceCode: string, c = tv) => postForm(token(), { grant_type: DEVICE_GRANT_TYPE, device_code: deviceCode }, c);
    const wait = (s: number) => new Promise((r) => setTimeout(r, s * 1000 + 50));
    const rows = async () => Number((await ((server.gh.storage as unknown as SqlStorage).database.db as Kysely<DB>)
      .selectFrom('backchannel_requests').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    before(async () => {
      server = await startChatServer(kind);
      alice = await signedIn(server, 'alice');
      tv = await server.createClient({ name: 'Living-room TV', public: true, grantTypes: [DEVICE_GRANT_TYPE, 'refresh_token'], redirectUris: [], scope: 'openid user' });
      cli = await server.createClient({ name: 'Deploy CLI', grantTypes: [DEVICE_GRANT_TYPE], redirectUris: [], scope: 'user' });
      rp = await oidc.discovery(new URL(server.url), tv.id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    });
    after(() => server.close());

    it('metadata names the endpoint and the grant type', async () => {
      const meta = rp.serverMetadata();
      assert.equal(meta.device_authorization_endpoint, endpoint());
      assert.ok(meta.grant_types_supported?.includes(DEVICE_GRANT_TYPE));
    });

    it('openid-client: the person enters the code and approves; tokens and an ID token, once', async () => {
      const res = await oidc.initiateDeviceAuthorization(rp, { scope: 'openid user' });
      assert.match(res.user_code, USER_CODE);
      assert.equal(res.verification_uri, `${server.url}/device`);
      assert.equal(res.verification_uri_complete, `${server.url}/device?user_code=${res.user_code}`);
      assert.equal(res.expires_in, 600);
      assert.equal(res.interval, 1);
      const polling = oidc.pollDeviceAuthorizationGrant(rp, res);
      // Typed lower-case, with a space instead of the dash (RFC 8628 §6.1).
      assert.equal(await decide(alice, res.user_code.toLowerCase().replace('-', ' '), true), 200);
      const tokens = await polling;
      assert.ok(tokens.access_token);
      assert.ok(tokens.refresh_token);
      assert.equal(tokens.claims()?.sub, alice.user.id);
      assert.equal(tokens.claims()?.aud, tv.id);
      // Single use: the device_code is spent.
      await wait(1);
      const again = await poll(res.device_code);
      assert.equal(again.status, 400);
      assert.equal(again.body.error, 'invalid_grant');
    });

    it('a confidential client authenticates at the device endpoint; the person denies: access_denied', async () => {
      const res = await start(cli, 'user');
      const pending = await poll(res.device_code, cli);
      assert.deepEqual([pending.status, pending.body.error], [400, 'authorization_pending']);
      assert.equal(await decide(alice, res.user_code, false), 200);
      await wait(1);
      const denied = await poll(res.device_code, cli);
      assert.deepEqual([denied.status, denied.body.error], [400, 'access_denied']);
      const viaLib = oidc.pollDeviceAuthorizationGrant(
        await oidc.discovery(new URL(server.url), cli.id, cli.secret, oidc.ClientSecretBasic(), { execute: [oidc.allowInsecureRequests] }),
        { ...res, interval: 1 } as oidc.DeviceAuthorizationResponse,
      );
      await assert.rejects(viaLib, (e: { error?: string }) => e.error === 'access_denied');
      // Without its secret the client is refused.
      const bad = await postForm(endpoint(), { scope: 'user' }, { id: cli.id, secret: 'wrong' });
      assert.deepEqual([bad.status, bad.body.error], [401, 'invalid_client']);
    });

    it('polling faster than the interval: slow_down, and the interval grows by 5 s', async () => {
      const res = await start();
      const first = await poll(res.device_code);
      assert.equal(first.body.error, 'authorization_pending');
      const fast = await poll(res.device_code);
      assert.deepEqual([fast.status, fast.body.error], [400, 'slow_down']);
      await wait(1);
      // One second is no longer enough: the interval is now 6 s.
      assert.equal((await poll(res.device_code)).body.error, 'slow_down');
    });

    it('parallel polls of an approved code: exactly one gets tokens', async () => {
      const res = await start();
      assert.equal(await decide(alice, res.user_code, true), 200);
      const answers = await Promise.all(Array.from({ length: 12 }, () => poll(res.device_code)));
      assert.equal(answers.filter((a) => a.status === 200).length, 1, JSON.stringify(answers.map((a) => a.body.error ?? 'ok')));
      for (const a of answers.filter((x) => x.status !== 200)) assert.ok(['slow_down', 'invalid_grant'].includes(a.body.error as string));
    });

    it('an expired code: expired_token, and the page refuses it', async () => {
      const res = await start();
      server.clock.offset += 601_000;
      try {
        const expired = await poll(res.device_code);
        assert.deepEqual([expired.status, expired.body.error], [400, 'expired_token']);
        const typed = await enterCode(alice, res.user_code);
        assert.equal(typed.status, 400);
        assert.match(typed.body, /not valid/);
      } finally {
        server.clock.offset -= 601_000;
      }
    });

    it('a code entered by one person cannot be decided by another', async () => {
      const res = await start();
      const bob = await signedIn(server, 'bob');
      assert.equal((await enterCode(alice, res.user_code)).status, 200);
      const stolen = await enterCode(bob, res.user_code);
      assert.equal(stolen.status, 400);
    });

    it('the page: signed out goes to sign-in first; a form without its CSRF token is refused', async () => {
      const res = await start();
      const stranger = new Agent(server.url);
      const first = await stranger.get(`/device?user_code=${res.user_code}`);
      assert.equal(first.status, 302);
      assert.match(first.headers.get('location')!, /^\/login\?return_to=%2Fdevice%3Fuser_code%3D/);
      const page = await alice.get('/device');
      const form = parseForm(await page.text());
      const forged = await alice.post('/device', { user_code: res.user_code });
      assert.equal(forged.status, 403);
      assert.equal(form.action, '/device');
      const decision = await alice.post('/device/decision', { request: '00000000-0000-0000-0000-000000000000', approve: 'true', csrf_token: form.fields.csrf_token! });
      assert.equal(decision.status, 400);
      const badApprove = await alice.post('/device/decision', { request: 'x', approve: 'maybe', csrf_token: form.fields.csrf_token! });
      assert.equal(badApprove.status, 400);
    });

    it('bad values: RFC 6749 §5.2 errors, never a 5xx, nothing stored', async () => {
      const before = await server.gh.storage.events.list({ limit: 1000 });
      const stored = await rows();
      const cases: [Record<string, string>, { id: string; secret?: string | undefined } | undefined, number, string][] = [
        [{ scope: 'admin' }, tv, 400, 'invalid_scope'],
        [{ scope: 'user' }, { id: 'nobody' }, 401, 'invalid_client'],
        [{ scope: 'user' }, undefined, 401, 'invalid_client'],
        [{ scope: 'user', client_id: 'someone-else' }, cli, 401, 'invalid_client'],
      ];
      for (const [params, c, status, error] of cases) {
        const r = await postForm(endpoint(), params, c);
        assert.deepEqual([r.status, r.body.error], [status, error], JSON.stringify(params));
      }
      const repeated = await fetch(endpoint(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `client_id=${tv.id}&scope=user&scope=openid` });
      assert.equal(repeated.status, 400);
      assert.equal(((await repeated.json()) as { error: string }).error, 'invalid_request');
      const other = await server.createClient({ name: 'Web app', grantTypes: ['authorization_code'] });
      const notAllowed = await postForm(endpoint(), {}, other);
      assert.deepEqual([notAllowed.status, notAllowed.body.error], [400, 'unauthorized_client']);
      for (const [params, error] of [
        [{ grant_type: DEVICE_GRANT_TYPE }, 'invalid_request'],
        [{ grant_type: DEVICE_GRANT_TYPE, device_code: 'not-a-code' }, 'invalid_grant'],
        [{ grant_type: DEVICE_GRANT_TYPE, device_code: 'x'.repeat(5000) }, 'invalid_grant'],
      ] as const) {
        const r = await postForm(token(), params, tv);
        assert.deepEqual([r.status, r.body.error], [400, error]);
      }
      const json = await fetch(endpoint(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"client_id":1}' });
      assert.ok(json.status < 500);
      const after = await server.gh.storage.events.list({ limit: 1000 });
      assert.equal(after.filter((e) => e.type.startsWith('device.')).length, before.filter((e) => e.type.startsWith('device.')).length);
      assert.equal(await rows(), stored, 'no request stored');
    });

    it('a linked chat gets the request with Approve/Deny; a forged button does nothing', async () => {
      const carol = await linkedPerson(server, 'carol');
      const dave = await linkedPerson(server, 'dave');
      const res = await start();
      const seen = await lastId(carol.chat);
      assert.equal((await enterCode(carol.browser, res.user_code)).status, 200);
      const msg = await nextMessage(carol.chat, seen, /access as App “Living-room TV”/);
      assert.match(msg.text, /openid user/);
      assert.deepEqual(buttonsOf(msg).map((b) => b.text), ['Approve', 'Deny']);
      // Dave's chat client refuses data that is on no button of the message…
      const daveSeen = await dave.chat.send('gatehouse_alerts_bot', 'hello');
      const approveData = buttonsOf(msg).find((b) => b.text === 'Approve')!.callback_data!;
      const refused = await dave.chat.press('gatehouse_alerts_bot', daveSeen.message_id, approveData);
      assert.equal(refused.status, 400);
      // …and a client of another Bot API that sends it anyway reaches the handler, which acts only for the chat's own person.
      const forged = await server.gh.chatActions.dispatch(approveData, { chatId: String(daveSeen.chat.id), messageId: daveSeen.message_id, now: Date.now() });
      assert.match(forged.answer, /not yours/);
      assert.equal(forged.editText, undefined);
      assert.equal((await poll(res.device_code)).body.error, 'authorization_pending');
      assert.equal(await press(carol.chat, msg, 'Approve'), 'Approved.');
      await wait(1);
      const tokens = await poll(res.device_code);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const events = await server.gh.storage.events.list({ type: 'device.approved', limit: 10 });
      assert.ok(events.some((e) => e.userId === carol.user.id));
    });
    it('wrong codes are rate limited per address (atomic throttle)', async () => {
      const guesser = await signedIn(server, 'guesser');
      const page = parseForm(await (await guesser.get('/device')).text());
      const statuses = await Promise.all(Array.from({ length: 14 }, (_, i) => guesser.post('/device', { ...page.fields, user_code: `BCDF-GH${'JKLMNPQRST'[i % 10]}${'BCDFGHJKLMNPQRSTVWXZ'[i]}` }).then((r) => r.status)));
      assert.ok(statuses.includes(429), statuses.join(','));
      assert.ok(statuses.filter((s) => s === 400).length <= 10, statuses.join(','));
    });

  });
}
