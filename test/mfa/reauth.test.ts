import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { REDIS_URL, dropRedisPrefix, freshRedisPrefix, redisAvailable } from '../helpers/redis.js';
import { chatPagePerson } from '../helpers/chat-page-token.js';
import { ChatApi } from '../bot/support.js';
import { BOT, PASSWORD, lastId, linkedPerson, nextMessage, startChatServer, type ChatServer, type LinkedPerson } from '../device/support.js';
import { enrolTotp, formFor, totpCode, turnOnChatApproval } from './support.js';

/** Past the default GATEHOUSE_REAUTH_WINDOW (600 s). */
const STALE_MS = 601_000;

/**
 * Issue 24, finding 8 ("sudo mode"): with only a session cookie one could
 * regenerate recovery codes, turn approval in chat off and add a passkey.
 * Now every sensitive change needs the password or a second factor from the
 * last GATEHOUSE_REAUTH_WINDOW seconds; otherwise the page asks for it first
 * and then goes on with the change; each change is told to the linked chat.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`re-authentication before sensitive changes (${kind})`, { skip }, () => {
    let server: ChatServer;
    let alice: LinkedPerson;
    let secret: string;

    before(async () => {
      server = await startChatServer(kind);
      alice = await linkedPerson(server, 'alice');
      // Right after signing in: no extra step.
      ({ secret } = await enrolTotp(alice.browser));
      await turnOnChatApproval(alice.browser, alice.chat, BOT);
    });
    after(() => server?.close());

    /** Moves the server's clock past the window of every proof given so far. */
    const goStale = () => {
      server.clock.offset += STALE_MS;
    };
    const codeNow = () => totpCode(secret, Math.floor(server.clock.now() / 30_000));
    const securityForm = async (action: string) => formFor(await (await alice.browser.get('/account/security')).text(), action);
    const codesLeft = () => server.gh.mfa.store.recoveryCodesLeft(alice.user.id);

    it('new recovery codes after the window: the page asks for the password, then makes them; the chat is told', async () => {
      goStale();
      const before = await codesLeft();
      const form = await securityForm('/account/security/recovery-codes');
      const asked = await alice.browser.post('/account/security/recovery-codes', form);
      assert.equal(asked.status, 403);
      const page = await asked.text();
      assert.match(page, /Confirm it is you/);
      assert.match(page, /<input id="reauth-password" name="password" type="password"/);
      assert.match(page, /name="code"/);
      assert.equal(await codesLeft(), before, 'nothing changed yet');
      // The page posts the same change again, with the proof.
      const again = formFor(page, '/account/security/recovery-codes');
      assert.equal(again.csrf_token, form.csrf_token);
      const wrong = await alice.browser.post('/account/security/recovery-codes', { ...again, password: 'not the password' });
      assert.equal(wrong.status, 401);
      assert.match(await wrong.text(), /not right/);
      assert.equal(await codesLeft(), before);
      const last = await lastId(alice.chat);
      const done = await alice.browser.post('/account/security/recovery-codes', { ...again, password: PASSWORD });
      assert.equal(done.status, 200);
      assert.equal([...(await done.text()).matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].length, 10);
      // The linked chat hears of it.
      await nextMessage(alice.chat, last, /recovery_codes|recovery codes/);
      // Within the window again: the next change goes through at once.
      assert.equal((await alice.browser.post('/account/security/recovery-codes', await securityForm('/account/security/recovery-codes'))).status, 200);
    });

    it('turning approval in chat off after the window: asked first; a code from the app proves it too', async () => {
      goStale();
      const form = { ...(await securityForm('/account/security/chat-approval')), enabled: 'off' };
      const asked = await alice.browser.post('/account/security/chat-approval', form);
      assert.equal(asked.status, 403);
      assert.match(await (await alice.browser.get('/account/security')).text(), /Approval in chat: <strong>on/, 'still on');
      const last = await lastId(alice.chat);
      const again = formFor(await asked.text(), '/account/security/chat-approval');
      assert.equal(again.enabled, 'off', 'the change is carried over');
      const done = await alice.browser.post('/account/security/chat-approval', { ...again, code: codeNow() });
      assert.deepEqual([done.status, done.headers.get('location')], [303, '/account/security?done=chat-off']);
      assert.match(await (await alice.browser.get('/account/security')).text(), /Approval in chat: <strong>off/);
      await nextMessage(alice.chat, last, /chat_approval|approval in this chat/i);
    });

    it('adding a passkey after the window: 403 reauth_required naming the page; after it, the options are given', async () => {
      goStale();
      const csrf = (await securityForm('/account/security/recovery-codes')).csrf_token;
      const options = () => alice.browser.request('/account/security/passkeys/options', {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ csrf_token: csrf }),
      });
      const refused = await options();
      assert.equal(refused.status, 403);
      const body = (await refused.json()) as { error: string; reauth: string };
      assert.equal(body.error, 'reauth_required');
      assert.equal(body.reauth, '/account/reauth?return_to=%2Faccount%2Fsecurity');
      const page = await (await alice.browser.get(body.reauth)).text();
      const form = formFor(page, '/account/reauth');
      const done = await alice.browser.post('/account/reauth', { ...form, password: PASSWORD });
      assert.deepEqual([done.status, done.headers.get('location')], [303, '/account/security']);
      assert.equal((await options()).status, 200);
    });

    it('the re-authentication page continues to local paths only', async () => {
      for (const [returnTo, to] of [['https://evil.example/x', '/'], ['//evil.example/x', '/'], ['/\\evil.example', '/'], ['/account?tab=1', '/account?tab=1']] as const) {
        goStale();
        const page = await (await alice.browser.get(`/account/reauth?return_to=${encodeURIComponent(returnTo)}`)).text();
        const done = await alice.browser.post('/account/reauth', { ...formFor(page, '/account/reauth'), password: PASSWORD });
        assert.deepEqual([done.status, done.headers.get('location')], [303, to], returnTo);
      }
      // Posted by hand with a foreign return_to: still local.
      goStale();
      const form = formFor(await (await alice.browser.get('/account/reauth')).text(), '/account/reauth');
      const done = await alice.browser.post('/account/reauth', { ...form, return_to: 'https://evil.example/', password: PASSWORD });
      assert.equal(done.headers.get('location'), '/');
      // Without a session: to sign-in; without the form's CSRF token: refused.
      assert.equal((await new Agent(server.url).get('/account/reauth')).status, 302);
      assert.equal((await alice.browser.post('/account/reauth', { ...form, csrf_token: 'x', password: PASSWORD })).status, 403);
    });

    it('linking a chat after the window: the confirmation asks first, then links', async () => {
      const chat = new ChatApi(server.bot!.url, await chatPagePerson(server, 'carol'));
      const carol = (await server.gh.storage.users.findByUsername('carol'))!;
      const browser = new Agent(server.url);
      assert.equal((await browser.login('carol', PASSWORD)).status, 303);
      // Signed in long ago; the link (valid 10 minutes) is new.
      goStale();
      const [answer] = await chat.replies(BOT, (await chat.send(BOT, '/start')).message_id);
      const link = new URL(/https?:\/\/\S+\/notifications\/link\?token=\S+/.exec(answer!.text)![0]);
      const confirm = parseForm(await (await browser.get(`${link.pathname}${link.search}`)).text());
      const asked = await browser.post(confirm.action, confirm.fields);
      assert.equal(asked.status, 403);
      assert.equal((await server.gh.storage.events.endpoints.list({ userId: carol.id })).length, 0, 'not linked yet');
      const again = formFor(await asked.text(), confirm.action);
      const done = await browser.post(confirm.action, { ...again, password: PASSWORD });
      assert.equal(done.status, 200, await done.clone().text());
      assert.equal((await server.gh.storage.events.endpoints.list({ userId: carol.id })).length, 1);
    });

    it('removing a factor still asks for the proof even within the window', async () => {
      const form = await securityForm('/account/security/totp/remove');
      assert.equal((await alice.browser.post('/account/security/totp/remove', form)).status, 400);
      const done = await alice.browser.post('/account/security/totp/remove', { ...form, password: PASSWORD });
      assert.deepEqual([done.status, done.headers.get('location')], [303, '/account/security?done=totp-removed']);
    });
  });
}

// Sessions in Redis (GATEHOUSE_REDIS_URL): the proof's time is kept in the session there too.
const redis = await redisAvailable();
describe('re-authentication with sessions in Redis', { skip: redis ? false : 'Redis is not reachable' }, () => {
  let server: ChatServer;
  let prefix: string;

  before(async () => {
    prefix = freshRedisPrefix();
    server = await startChatServer('sqlite', { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix });
  });
  after(async () => {
    await server?.close();
    await dropRedisPrefix(prefix);
  });

  it('asked after the window; the proof opens it again for the next change', async () => {
    const agent = new Agent(server.url);
    const user = await server.createUser('dora');
    assert.equal((await agent.login('dora', user.password)).status, 303);
    server.clock.offset = STALE_MS;
    const start = async () => agent.post('/account/security/totp/start', formFor(await (await agent.get('/account/security')).text(), '/account/security/totp/start'));
    assert.equal((await start()).status, 403);
    const page = await (await agent.get('/account/reauth?return_to=%2Faccount%2Fsecurity')).text();
    const done = await agent.post('/account/reauth', { ...formFor(page, '/account/reauth'), password: user.password });
    assert.deepEqual([done.status, done.headers.get('location')], [303, '/account/security']);
    assert.equal((await start()).status, 303);
  });
});
