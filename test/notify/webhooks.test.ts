import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { DeliveryWorker } from '../../src/core/notify/worker.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/core/notify/schedule.js';
import { notifyTransport } from '../../src/core/notify/transport.js';
import { createOutbound } from '../../src/infra/outbound/client.js';
import { Agent } from '../helpers/agent.js';
import { TestClock } from '../helpers/clock.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { authorize } from '../helpers/authorize.js';
import { REDIRECT } from '../e2e/support.js';
import { admin, ADMIN_TOKEN, Receiver } from './support.js';

const form = (body: Record<string, string>, auth?: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', ...(auth ? { authorization: auth } : {}) },
  body: new URLSearchParams(body),
});
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

for (const { kind, skip } of await databaseKinds()) {
  describe(`webhooks: events, signatures, retries (${kind})`, { skip }, () => {
    let server: TestServer;
    let receiver: Receiver;
    let worker: DeliveryWorker;
    const clock = new TestClock();
    /** Delivers everything due now; returns how many attempts were made. */
    const drain = async () => {
      let n = 0;
      for (let k; (k = await worker.runOnce()); ) n += k;
      return n;
    };
    const endpoint = async (path: string, events: string[] | string, extra: Record<string, unknown> = {}) => {
      const r = await admin(server.url, 'POST', '/webhooks', { url: `${receiver.url}${path}`, events, ...extra });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      receiver.secretFor(path, r.json.secret as string);
      return r.json as { id: string; url: string; events: string[]; secret: string };
    };

    const outbound = createOutbound({ allowPrivate: true });
    before(async () => {
      receiver = await new Receiver().start();
      // No `worker` role: the test runs the worker itself, on the controlled clock.
      server = await startServer({ db: kind, clock, env: { GATEHOUSE_ROLES: 'auth', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN } });
      worker = new DeliveryWorker({
        events: server.gh.storage.events, clock, webhooks: notifyTransport(outbound.request), chats: notifyTransport(outbound.request),
        chat: undefined, random: () => 0.5,
      }, { timeoutMs: 5000 });
    });
    after(async () => {
      await worker.stop();
      outbound.close();
      await server.close();
      await receiver.close();
    });

    it('records token.issued only while something subscribes to it', async () => {
      const c = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [] });
      const issue = () => fetch(`${server.url}/oauth/token`, form({ grant_type: 'client_credentials' }, basic(c.id, c.secret!)));
      const issued = async () => (await admin(server.url, 'GET', '/events?type=token.issued')).json.events as unknown[];
      assert.equal((await issue()).status, 200);
      assert.equal((await issued()).length, 0);
      await endpoint('/tokens', ['token.issued']);
      assert.equal((await issue()).status, 200);
      assert.equal((await issued()).length, 1);
      await drain();
      assert.deepEqual([...receiver.types()], ['token.issued']);
      assert.deepEqual(receiver.invalid, []);
    });

    it('delivers every kind of event, each verified by the standardwebhooks library', async () => {
      const all = await endpoint('/all', '*');
      assert.match(all.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.ok(all.id.startsWith('ep_'));
      const gone = await endpoint('/gone', ['client.created']);
      // The /gone receiver answers 410: its endpoint is disabled and webhook.disabled is raised.
      receiver.answer = (r) => ({ status: r.path === '/gone' ? 410 : 200 });

      // client.created, client.secret_rotated through the admin API.
      const created = await admin(server.url, 'POST', '/clients', { client_name: 'Shop', redirect_uris: [REDIRECT], scope: 'user read' });
      assert.equal(created.status, 201);
      const client = { id: created.json.client_id as string, secret: created.json.client_secret as string };
      const rotated = await admin(server.url, 'POST', `/clients/${client.id}/secret`);
      client.secret = rotated.json.client_secret as string;

      // user.login.failed and user.locked (5 failures lock the account), user.login.succeeded.
      await server.createUser('victim');
      const attacker = new Agent(server.url);
      for (let i = 0; i < 5; i++) await attacker.login('victim', 'wrong password');
      const alice = await server.createUser('alice');
      const agent = new Agent(server.url);

      // consent.granted and token.issued (code + PKCE), refresh_token.reuse_detected, token.revoked.
      const verifier = randomBytes(32).toString('base64url');
      const q = new URLSearchParams({
        response_type: 'code', client_id: client.id, redirect_uri: REDIRECT, scope: 'user', state: 's',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
      });
      const back = await authorize(agent, new URL(`${server.url}/oauth2?${q}`), { user: alice });
      const code = back.searchParams.get('code')!;
      const tokenRes = await fetch(`${server.url}/oauth/token`, form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, basic(client.id, client.secret)));
      assert.equal(tokenRes.status, 200);
      const tokens = (await tokenRes.json()) as { access_token: string; refresh_token: string };
      const refresh = () => fetch(`${server.url}/oauth/token`, form({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, basic(client.id, client.secret)));
      assert.equal((await refresh()).status, 200);
      assert.equal((await refresh()).status, 400);
      const revoked = await fetch(`${server.url}/oauth/revoke`, form({ token: tokens.access_token }, basic(client.id, client.secret)));
      assert.equal(revoked.status, 200);
      // The same (revokes what it issued): the code again: authorization_code.reuse_detected.
      await fetch(`${server.url}/oauth/token`, form({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, basic(client.id, client.secret)));

      // consent.denied: a second application, refused.
      const other = await server.createClient({ name: 'Other app', redirectUris: [REDIRECT] });
      const denied = await authorize(agent, new URL(`${server.url}/oauth2?${new URLSearchParams({ response_type: 'code', client_id: other.id, redirect_uri: REDIRECT, state: 'd', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`), { user: alice, approve: false });
      assert.equal(denied.searchParams.get('error'), 'access_denied');

      await drain();

      const expected = ['client.created', 'client.secret_rotated', 'user.login.failed', 'user.locked', 'user.login.succeeded', 'consent.granted',
        'token.issued', 'authorization_code.reuse_detected', 'refresh_token.reuse_detected', 'token.revoked', 'consent.denied', 'webhook.disabled'];
      const seen = new Set([...receiver.unique.values()].filter((r) => r.path === '/all').map((r) => r.type));
      for (const t of expected) assert.ok(seen.has(t), `${t} delivered (saw ${[...seen].join(', ')})`);
      assert.deepEqual(receiver.invalid, []);
      for (const r of receiver.unique.values()) {
        assert.deepEqual(Object.keys(JSON.parse(r.body)), ['type', 'timestamp', 'data']);
        assert.match(r.id, /^msg_[0-9A-Z]{26}$/);
        assert.equal(r.timestamp, new Date(r.timestamp).toISOString());
      }
      const locked = [...receiver.unique.values()].find((r) => r.type === 'user.locked')!;
      assert.equal(locked.data.username, 'victim');
      assert.equal(locked.data.locked_by, 'account');
      const disabled = [...receiver.unique.values()].find((r) => r.type === 'webhook.disabled')!;
      assert.equal(disabled.data.endpoint_id, gone.id);
      assert.equal(disabled.data.reason, 'gone');
      const goneNow = await admin(server.url, 'GET', `/webhooks/${gone.id}`);
      assert.equal(goneNow.json.enabled, false);
      assert.equal(goneNow.json.disabled_reason, 'gone');
      // What it had queued is dead-lettered; nothing more is queued for it.
      const queued = (await admin(server.url, 'GET', `/webhooks/${gone.id}/messages`)).json.messages as { status: string }[];
      assert.ok(queued.every((m) => m.status === 'failed'));
      await admin(server.url, 'POST', '/clients', { client_name: 'Later', redirect_uris: [REDIRECT] });
      const log = await admin(server.url, 'GET', `/webhooks/${gone.id}/messages`);
      assert.equal((log.json.messages as unknown[]).length, queued.length);
      await drain();
      receiver.answer = () => ({ status: 200 });
    });

    it('keeps order for an ordered endpoint: one at a time, a failure holds the rest back', async () => {
      const ordered = await endpoint('/ordered', ['client.created'], { ordered: true });
      let failFirst = true;
      receiver.answer = (r) => {
        if (r.path !== '/ordered') return { status: 200 };
        if (failFirst) {
          failFirst = false;
          return { status: 500 };
        }
        return { status: 200 };
      };
      const names = ['first', 'second', 'third'];
      for (const n of names) await admin(server.url, 'POST', '/clients', { client_name: n, redirect_uris: [REDIRECT] });
      await drain();
      assert.equal(receiver.all.filter((r) => r.path === '/ordered').length, 0, 'the first failed; the others wait behind it');
      clock.advance(RETRY_DELAYS_MS[0]!);
      await drain();
      const got = receiver.all.filter((r) => r.path === '/ordered').map((r) => r.data.client_name);
      assert.deepEqual(got, names);
      const first = (await admin(server.url, 'GET', `/webhooks/${ordered.id}/messages?status=delivered`)).json.messages as { attempts: number }[];
      assert.equal(first.length, 3);
      receiver.answer = () => ({ status: 200 });
      await admin(server.url, 'DELETE', `/webhooks/${ordered.id}`);
    });

    it('honours Retry-After when it asks for longer than the schedule', async () => {
      const slow = await endpoint('/slow', ['client.created']);
      receiver.answer = (r) => (r.path === '/slow' ? { status: 503, headers: { 'retry-after': '7200' } } : { status: 200 });
      await admin(server.url, 'POST', '/clients', { client_name: 'Busy', redirect_uris: [REDIRECT] });
      const start = clock.now();
      await drain();
      const [m] = (await admin(server.url, 'GET', `/webhooks/${slow.id}/messages`)).json.messages as { status: string; next_attempt_at: string; last_status: number }[];
      assert.equal(m!.status, 'pending');
      assert.equal(m!.last_status, 503);
      assert.equal(Date.parse(m!.next_attempt_at), start + 7200_000);
      receiver.answer = () => ({ status: 200 });
      await admin(server.url, 'DELETE', `/webhooks/${slow.id}`);
    });

    it('retries on the schedule under the controlled clock, dead-letters, disables an endpoint failing for days; replay and resend', async () => {
      receiver.checkTimestamp = false;
      for (const e of (await admin(server.url, 'GET', '/webhooks')).json.webhooks as { id: string }[]) await admin(server.url, 'DELETE', `/webhooks/${e.id}`);
      await endpoint('/ops', ['webhook.disabled']);
      const flaky = await endpoint('/flaky', ['client.created']);
      receiver.answer = (r) => ({ status: r.path === '/flaky' ? 500 : 200 });
      const created = await admin(server.url, 'POST', '/clients', { client_name: 'Retried', redirect_uris: [REDIRECT] });
      const clientId = created.json.client_id as string;
      const flakyCount = async () => (await admin(server.url, 'GET', `/webhooks/${flaky.id}/messages`)).json.messages as { message_id: string; status: string; attempts: number }[];
      assert.equal(await drain(), 1, 'first attempt immediately');
      const [msg] = await flakyCount();
      const times = [clock.now()];
      for (const delay of RETRY_DELAYS_MS) {
        clock.advance(delay - 1000);
        assert.equal(await drain(), 0, 'not before its time');
        clock.advance(1000);
        assert.equal(await drain(), 1, `retried ${delay} ms after the previous attempt`);
        times.push(clock.now());
      }
      const detail = await admin(server.url, 'GET', `/webhooks/${flaky.id}/messages/${msg!.message_id}`);
      assert.equal(detail.json.status, 'failed', 'exhausted: dead-lettered');
      const attempts = detail.json.attempts as { attempt: number; at: string; status: number; ok: boolean }[];
      assert.equal(attempts.length, MAX_ATTEMPTS);
      assert.deepEqual(attempts.map((a) => Date.parse(a.at)), times);
      assert.ok(attempts.every((a) => a.status === 500 && !a.ok));
      assert.equal(((detail.json.event as { data: { client_id: string } }).data.client_id), clientId);
      const dead = (await admin(server.url, 'GET', `/webhooks/${flaky.id}/messages?status=failed`)).json.messages as unknown[];
      assert.equal(dead.length, 1);

      // Still failing five days after the first failure: disabled, webhook.disabled raised.
      clock.advance(2 * 86_400_000);
      await admin(server.url, 'POST', '/clients', { client_name: 'Days later', redirect_uris: [REDIRECT] });
      await drain();
      const state = await admin(server.url, 'GET', `/webhooks/${flaky.id}`);
      assert.equal(state.json.enabled, false);
      assert.equal(state.json.disabled_reason, 'failing');
      assert.ok([...receiver.unique.values()].some((r) => r.type === 'webhook.disabled' && r.data.endpoint_id === flaky.id && r.data.reason === 'failing'));

      // The receiver is fixed: enable, replay every failed message since the first, resend one.
      receiver.answer = () => ({ status: 200 });
      assert.equal((await admin(server.url, 'POST', `/webhooks/${flaky.id}/enable`)).json.enabled, true);
      const replay = await admin(server.url, 'POST', `/webhooks/${flaky.id}/replay`, { since: new Date(times[0]! - 1000).toISOString() });
      assert.equal(replay.json.replayed, 2);
      await drain();
      const delivered = receiver.all.filter((r) => r.path === '/flaky');
      assert.equal(delivered.length, 2);
      assert.equal(new Set(delivered.map((r) => r.id)).size, 2);
      const resend = await admin(server.url, 'POST', `/webhooks/${flaky.id}/messages/${msg!.message_id}/resend`);
      assert.equal(resend.status, 202);
      await drain();
      const again = receiver.all.filter((r) => r.path === '/flaky' && r.id === msg!.message_id);
      assert.equal(again.length, 2, 'resent with the same webhook-id: the receiver can drop it');
      const unknown = await admin(server.url, 'POST', `/webhooks/${flaky.id}/messages/msg_nope/resend`);
      assert.equal(unknown.status, 404);
      assert.deepEqual(receiver.invalid, []);
    });
  });
}
