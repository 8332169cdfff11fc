import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as oidc from 'openid-client';
import type { Kysely } from 'kysely';
import { databaseKinds } from '../helpers/db.js';
import { listen } from '../bot/support.js';
import { CIBA_GRANT_TYPE } from '../../src/core/oauth/ciba-options.js';
import type { SqlStorage } from '../../src/store/index.js';
import type { DB } from '../../src/store/schema.js';
import { buttonsOf, lastId, linkedPerson, nextMessage, postForm, press, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';

type Client = { id: string; secret: string | undefined };

for (const { kind, skip } of await databaseKinds()) {
  describe(`CIBA, OpenID Connect Client-Initiated Backchannel Authentication (${kind})`, { skip }, () => {
    let server: ChatServer;
    let erin: LinkedPerson;
    let agent: Client;
    let pinged: Client;
    let rp: oidc.Configuration;
    let receiver: Awaited<ReturnType<typeof listen>>;
    const pings: { authorization: string | undefined; body: string }[] = [];
    const endpoint = () => `${server.url}/oauth/bc-authorize`;
    const token = () => `${server.url}/oauth/token`;
    const ask = (params: Record<string, string>, c: Client = agent) => postForm(endpoint(), { scope: 'openid user', login_hint: 'erin', ...params }, c);
    const poll = (authReqId: string, c: Client = agent) => postForm(token(), { grant_type: CIBA_GRANT_TYPE, auth_req_id: authReqId }, c);
    const wait = (s: number) => new Promise((r) => setTimeout(r, s * 1000 + 50));
    const rows = async () => Number((await ((server.gh.storage as unknown as SqlStorage).database.db as Kysely<DB>)
      .selectFrom('backchannel_requests').select((e) => e.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

    before(async () => {
      receiver = await listen((req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          pings.push({ authorization: req.headers.authorization, body });
          res.writeHead(204).end();
        });
      });
      server = await startChatServer(kind);
      erin = await linkedPerson(server, 'erin');
      agent = await server.createClient({ name: 'Research agent', grantTypes: [CIBA_GRANT_TYPE], redirectUris: [], scope: 'openid user', backchannelTokenDeliveryMode: 'poll' });
      pinged = await server.createClient({
        name: 'Pinged agent', grantTypes: [CIBA_GRANT_TYPE], redirectUris: [], scope: 'openid user',
        backchannelTokenDeliveryMode: 'ping', backchannelNotificationEndpoint: `${receiver.url}/ciba`,
      });
      rp = await oidc.discovery(new URL(server.url), agent.id, agent.secret, oidc.ClientSecretBasic(), { execute: [oidc.allowInsecureRequests] });
    });
    after(async () => {
      await server.close();
      await receiver.close();
    });

    it('metadata: the endpoint, poll and ping, no user_code, the grant type', () => {
      const meta = rp.serverMetadata();
      assert.equal(meta.backchannel_authentication_endpoint, endpoint());
      assert.deepEqual(meta.backchannel_token_delivery_modes_supported, ['poll', 'ping']);
      assert.equal(meta.backchannel_user_code_parameter_supported, false);
      assert.ok(meta.grant_types_supported?.includes(CIBA_GRANT_TYPE));
    });

    it('openid-client, poll mode: the chat shows client, scopes and binding message; Approve gives tokens and an ID token, once', async () => {
      const seen = await lastId(erin.chat);
      const res = await oidc.initiateBackchannelAuthentication(rp, { scope: 'openid user', login_hint: 'erin', binding_message: 'Order #4711' });
      assert.equal(res.expires_in, 300);
      assert.equal(res.interval, 1);
      const polling = oidc.pollBackchannelAuthenticationGrant(rp, res);
      const msg = await nextMessage(erin.chat, seen, /App “Research agent” asks for your permission/);
      assert.match(msg.text, /openid user/);
      assert.match(msg.text, /Order #4711/);
      assert.deepEqual(buttonsOf(msg).map((b) => b.text), ['Approve', 'Deny']);
      assert.equal(await press(erin.chat, msg, 'Approve'), 'Approved.');
      const tokens = await polling;
      assert.ok(tokens.access_token);
      assert.equal(tokens.claims()?.sub, erin.user.id);
      assert.equal(tokens.claims()?.aud, agent.id);
      // The message now says what happened and has no buttons left.
      const edited = (await erin.chat.messages('gatehouse_alerts_bot', seen)).find((m) => m.message_id === msg.message_id)!;
      assert.match(edited.text, /Approved/);
      assert.equal(buttonsOf(edited).length, 0);
      await wait(1);
      const again = await poll(res.auth_req_id);
      assert.deepEqual([again.status, again.body.error], [400, 'invalid_grant']);
      const events = await server.gh.storage.events.list({ type: 'ciba.approved', limit: 10 });
      assert.ok(events.some((e) => e.userId === erin.user.id && e.data.binding_message === 'Order #4711'));
    });

    it('Deny: access_denied, ciba.denied, and a second press does nothing', async () => {
      const seen = await lastId(erin.chat);
      const res = await ask({});
      const msg = await nextMessage(erin.chat, seen, /App “Research agent” asks for your permission/);
      assert.equal((await poll(res.body.auth_req_id as string)).body.error, 'authorization_pending');
      assert.equal(await press(erin.chat, msg, 'Deny'), 'Denied.');
      await wait(1);
      const denied = await poll(res.body.auth_req_id as string);
      assert.deepEqual([denied.status, denied.body.error], [400, 'access_denied']);
      const data = buttonsOf(msg).find((b) => b.text === 'Approve')!.callback_data!;
      const late = await server.gh.chatActions.dispatch(data, { chatId: String(msg.chat.id), messageId: msg.message_id, now: Date.now() });
      assert.match(late.answer, /not open/);
      assert.ok((await server.gh.storage.events.list({ type: 'ciba.denied', limit: 10 })).length >= 1);
    });

    it('ping mode: the client is notified with its bearer token, then redeems the auth_req_id', async () => {
      const seen = await lastId(erin.chat);
      const res = await ask({ client_notification_token: 'ping-token-8c1f', binding_message: 'Deploy v2' }, pinged);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const msg = await nextMessage(erin.chat, seen, /App “Pinged agent” asks for your permission/);
      assert.equal(pings.length, 0);
      await press(erin.chat, msg, 'Approve');
      for (let i = 0; i < 50 && pings.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(pings.length, 1);
      assert.equal(pings[0]!.authorization, 'Bearer ping-token-8c1f');
      assert.deepEqual(JSON.parse(pings[0]!.body), { auth_req_id: res.body.auth_req_id });
      const tokens = await poll(res.body.auth_req_id as string, pinged);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.ok(tokens.body.id_token);
    });

    it('slow_down when polling faster than the interval; parallel polls of an approved request: one winner', async () => {
      const seen = await lastId(erin.chat);
      const res = await ask({});
      const id = res.body.auth_req_id as string;
      assert.equal((await poll(id)).body.error, 'authorization_pending');
      assert.deepEqual([(await poll(id)).body.error], ['slow_down']);
      const msg = await nextMessage(erin.chat, seen, /App “Research agent” asks for your permission/);
      await press(erin.chat, msg, 'Approve');
      await wait(6);
      const answers = await Promise.all(Array.from({ length: 12 }, () => poll(id)));
      assert.equal(answers.filter((a) => a.status === 200).length, 1, JSON.stringify(answers.map((a) => a.body.error ?? 'ok')));
    });

    it('requested_expiry: expired_token after it, and the button no longer acts', async () => {
      const seen = await lastId(erin.chat);
      const res = await ask({ requested_expiry: '60' });
      assert.equal(res.body.expires_in, 60);
      const msg = await nextMessage(erin.chat, seen, /App “Research agent” asks for your permission/);
      server.clock.offset += 61_000;
      try {
        const expired = await poll(res.body.auth_req_id as string);
        assert.deepEqual([expired.status, expired.body.error], [400, 'expired_token']);
        assert.match(String(await press(erin.chat, msg, 'Approve')), /not open/);
      } finally {
        server.clock.offset -= 61_000;
      }
    });

    it('bad values: CIBA and RFC 6749 §5.2 errors, never a 5xx, nothing stored', async () => {
      const before = await rows();
      const other = await server.createClient({ name: 'Web app', grantTypes: ['authorization_code'], scope: 'openid user' });
      const helpdesk = await server.createClient({ name: 'Helpdesk', trusted: true, grantTypes: [CIBA_GRANT_TYPE], redirectUris: [], scope: 'openid user', backchannelTokenDeliveryMode: 'poll' });
      const cases: [Record<string, string>, Client | undefined, number, string][] = [
        [{ scope: 'user' }, agent, 400, 'invalid_scope'],
        [{ scope: 'openid admin' }, agent, 400, 'invalid_scope'],
        // unknown_user_id only for a first-party client (test/ciba/limits.test.ts); the others: a request that waits.
        [{ login_hint: 'nobody-here' }, helpdesk, 400, 'unknown_user_id'],
        [{ login_hint: 'x'.repeat(300) }, helpdesk, 400, 'unknown_user_id'],
        [{ id_token_hint: 'eyJ.x.y' }, agent, 400, 'invalid_request'],
        [{ login_hint_token: 'abc' }, agent, 400, 'invalid_request'],
        [{ binding_message: 'x'.repeat(65) }, agent, 400, 'invalid_binding_message'],
        [{ binding_message: 'line\nbreak' }, agent, 400, 'invalid_binding_message'],
        [{ requested_expiry: '0' }, agent, 400, 'invalid_request'],
        [{ requested_expiry: '-5' }, agent, 400, 'invalid_request'],
        [{ requested_expiry: 'soon' }, agent, 400, 'invalid_request'],
        [{ requested_expiry: '99999' }, agent, 400, 'invalid_request'],
        [{ client_notification_token: 'abc' }, agent, 400, 'invalid_request'],
        [{}, pinged, 400, 'invalid_request'],
        [{ client_notification_token: 'bad token with spaces' }, pinged, 400, 'invalid_request'],
        [{ user_code: '1234' }, agent, 400, 'invalid_request'],
        [{}, { id: agent.id, secret: 'wrong' }, 401, 'invalid_client'],
        [{}, { id: agent.id, secret: undefined }, 401, 'invalid_client'],
        [{}, other, 400, 'unauthorized_client'],
      ];
      for (const [params, c, status, error] of cases) {
        const r = await ask(params, c);
        assert.deepEqual([r.status, r.body.error], [status, error], JSON.stringify(params));
      }
      const noScope = await postForm(endpoint(), { login_hint: 'erin' }, agent);
      assert.deepEqual([noScope.status, noScope.body.error], [400, 'invalid_request']);
      const noHint = await postForm(endpoint(), { scope: 'openid' }, agent);
      assert.deepEqual([noHint.status, noHint.body.error], [400, 'invalid_request']);
      const twoHints = await ask({ id_token_hint: 'a.b.c' });
      assert.equal(twoHints.body.error, 'invalid_request');
      for (const [params, error] of [
        [{ grant_type: CIBA_GRANT_TYPE }, 'invalid_request'],
        [{ grant_type: CIBA_GRANT_TYPE, auth_req_id: 'unknown' }, 'invalid_grant'],
      ] as const) {
        const r = await postForm(token(), params, agent);
        assert.deepEqual([r.status, r.body.error], [400, error]);
      }
      // A locked account cannot be asked.
      await server.gh.console.setLocked(erin.user.id, Date.now());
      try {
        const locked = await ask({});
        assert.deepEqual([locked.status, locked.body.error], [400, 'access_denied']);
      } finally {
        await server.gh.console.setLocked(erin.user.id, null);
      }
      assert.equal(await rows(), before);
    });

    it('client options: ping needs an endpoint; bad modes are refused by the admin API and the CLI core', async () => {
      const { createClient } = await import('../../src/core/admin.js');
      for (const [input, message] of [
        [{ backchannelTokenDeliveryMode: 'push' }, /must be one of poll, ping/],
        [{ backchannelTokenDeliveryMode: 'ping' }, /needs --backchannel-notification-endpoint/],
        [{ backchannelTokenDeliveryMode: 'ping', backchannelNotificationEndpoint: 'not a url' }, /absolute http/],
        [{ backchannelTokenDeliveryMode: 'ping', backchannelNotificationEndpoint: 'ftp://x.example/' }, /absolute http/],
        [{ backchannelTokenDeliveryMode: 'poll', backchannelNotificationEndpoint: 'https://x.example/' }, /ping mode only/],
        [{ backchannelNotificationEndpoint: 'https://x.example/' }, /needs --backchannel-token-delivery-mode ping/],
      ] as const) {
        await assert.rejects(createClient(server.gh.storage, server.gh.clock, { name: 'x', redirectUris: [], grantTypes: [CIBA_GRANT_TYPE], ...input }), (e: Error & { description?: string }) => message.test(e.description ?? e.message));
      }
    });
  });
}
