// "Forgot password?" (issue 26, item 4): by an e-mailed link (real SMTP server; single use, 30
// minutes on the server's clock, reused and expired refused) and by the linked chat (the number
// tapped through Gatehouse's own chat page client). The same page whether or not the account
// exists; requests throttled per name, in parallel too; an account with an authenticator app still
// needs its code; a reset signs out a browser signed in before and its refresh token answers
// invalid_grant; it lifts a lock only with a second factor (the tap), not with the e-mail alone.
// SQLite and PostgreSQL, and SQLite with sessions in Redis.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lockAccount } from '../../src/core/account-lock.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { issueCode, REDIRECT } from '../helpers/authorize.js';
import { databaseKinds, type DbKind } from '../helpers/db.js';
import { dropRedisPrefix, freshRedisPrefix, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { BOT, buttonsOf, linkedPerson, nextMessage, postForm, startChatServer, type ChatServer } from '../device/support.js';
import { SmtpSink } from '../mail/support.js';
import { ChatApi } from '../bot/support.js';
import { chatPageToken } from '../helpers/chat-page-token.js';
import { enrolTotp, stepNow, totpCode } from '../mfa/support.js';

const NEW = 'a fresh passphrase for 2027';
const variants: { name: string; kind: DbKind; redis: boolean; skip: string | false }[] = [];
for (const { kind, skip } of await databaseKinds()) variants.push({ name: kind, kind, redis: false, skip });
variants.push({ name: 'sqlite, sessions in Redis', kind: 'sqlite', redis: true, skip: (await redisAvailable()) ? false : 'Redis not reachable' });

for (const v of variants) {
  describe(`password recovery (${v.name})`, { skip: v.skip, timeout: 180_000 }, () => {
    let server: ChatServer;
    let sink: SmtpSink;
    let app: { id: string; secret: string | undefined };
    const prefix = freshRedisPrefix();
    let n = 0;

    before(async () => {
      sink = await new SmtpSink().start();
      server = await startChatServer(v.kind, {
        GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${sink.port}`, ...(v.redis ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}),
      });
      app = await server.createClient({ name: 'Notes', grantTypes: ['authorization_code', 'refresh_token'], scope: 'user', trusted: true });
    });
    after(async () => {
      await server?.close();
      await sink?.stop();
      if (v.redis) await dropRedisPrefix(prefix);
    });

    /** Asks at /login/forgot as a browser does (the form's CSRF token first). */
    async function ask(browser: Agent, username: string, via: 'email' | 'chat'): Promise<Response> {
      const form = parseForm(await (await browser.get('/login/forgot')).text());
      return browser.post('/login/forgot', { ...form.fields, username, via });
    }
    /** The reset link the last message to `to` carries. */
    async function linkFor(to: string, count: number): Promise<string> {
      const mails = await sink.waitFor(count);
      const mail = mails.filter((m) => m.rcptTo.includes(to)).at(-1);
      assert.ok(mail, `no mail to ${to}`);
      const m = /https?:\/\/\S+(\/login\/forgot\/reset\?token=[\w-]+)/.exec(mail.text);
      assert.ok(m, mail.text);
      return m[1]!;
    }
    /** Follows a link into the form; the form's fields. */
    async function openForm(browser: Agent, link: string): Promise<{ status: number; fields: Record<string, string>; page: string }> {
      let res = await browser.get(link);
      if (res.status === 303) res = await browser.get(res.headers.get('location')!);
      const page = await res.text();
      return { status: res.status, fields: res.status === 200 ? parseForm(page).fields : {}, page };
    }
    async function signedInWithToken(username: string, password: string) {
      const browser = new Agent(server.url);
      assert.equal((await browser.login(username, password)).status, 303);
      const { code, verifier } = await issueCode(browser, app.id);
      const t = await postForm(`${server.url}/oauth/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, app);
      assert.equal(t.status, 200, JSON.stringify(t.body));
      return { browser, refresh: (t.body as { refresh_token: string }).refresh_token };
    }
    const refreshError = async (refresh: string) => ((await postForm(`${server.url}/oauth/token`, { grant_type: 'refresh_token', refresh_token: refresh }, app)).body as { error?: string }).error;
    const canSignIn = async (username: string, password: string) => (await new Agent(server.url).login(username, password)).status === 303;

    it('by e-mail: the link arrives, works once, signs out what was signed in; reused and expired links are refused', async () => {
      const u = await server.createUser(`mail${++n}`);
      const before = await signedInWithToken(u.username, u.password);
      const browser = new Agent(server.url);
      const count = sink.received.length;
      const asked = await ask(browser, `${u.username}@example.test`, 'email');
      assert.equal(asked.status, 200);
      assert.match(await asked.text(), /If an account matches, we sent a link/);
      const link = await linkFor(`${u.username}@example.test`, count + 1);
      const form = await openForm(browser, link);
      assert.equal(form.status, 200, form.page);
      assert.equal(form.fields.code, undefined, 'no second factor: no code asked');
      const weak = await browser.post('/login/forgot/reset', { ...form.fields, password: 'short' });
      assert.equal(weak.status, 400);
      const done = await browser.post('/login/forgot/reset', { ...form.fields, password: NEW });
      assert.equal(done.status, 200);
      assert.match(await done.text(), /Your password is changed/);
      assert.equal((await before.browser.get('/account')).status !== 200, true, 'the browser signed in before is signed out');
      assert.equal(await refreshError(before.refresh), 'invalid_grant');
      assert.equal(await canSignIn(u.username, u.password), false);
      assert.equal(await canSignIn(u.username, NEW), true);
      const reused = await openForm(new Agent(server.url), link);
      assert.equal(reused.status, 400, 'a used link is refused');
      const changed = (await server.gh.storage.events.list({ type: 'user.password_changed', limit: 50 })).find((e) => e.userId === u.id);
      assert.equal((changed!.data as { changed_by: string }).changed_by, 'reset');

      // Expired: 31 minutes later on the server's clock.
      const again = new Agent(server.url);
      const c2 = sink.received.length;
      await ask(again, u.username, 'email');
      const late = await linkFor(`${u.username}@example.test`, c2 + 1);
      const open = await openForm(again, late);
      assert.equal(open.status, 200);
      server.clock.offset += 31 * 60_000;
      try {
        assert.equal((await again.post('/login/forgot/reset', { ...open.fields, password: 'yet another passphrase 1' })).status, 400);
        assert.equal((await openForm(new Agent(server.url), late)).status, 400);
      } finally {
        server.clock.offset -= 31 * 60_000;
      }
    });

    it('an unknown account gets the same answer (e-mail and chat); nothing is sent', async () => {
      const u = await server.createUser(`known${++n}`);
      const count = sink.received.length;
      const known = await (await ask(new Agent(server.url), u.username, 'email')).text();
      const unknown = await (await ask(new Agent(server.url), 'nobody-at-all', 'email')).text();
      assert.equal(unknown, known);
      await sink.waitFor(count + 1);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(sink.received.length, count + 1, 'only the known account got a message');
      const chat = await ask(new Agent(server.url), 'nobody-at-all', 'chat');
      assert.equal(chat.status, 200);
      assert.match(await chat.text(), /id="approval-number">\d\d</);
    });

    it('throttled per name: of 8 parallel requests 5 are answered, the rest 429', async () => {
      const u = await server.createUser(`busy${++n}`);
      const browsers = await Promise.all(Array.from({ length: 8 }, async () => {
        const b = new Agent(server.url);
        return { b, fields: parseForm(await (await b.get('/login/forgot')).text()).fields };
      }));
      const statuses = await Promise.all(browsers.map(({ b, fields }) => b.post('/login/forgot', { ...fields, username: u.username, via: 'email' }).then((r) => r.status)));
      assert.deepEqual(statuses.sort(), [200, 200, 200, 200, 200, 429, 429, 429]);
    });

    it('an account with an authenticator app still needs its code; given, the reset lifts a lock', async () => {
      const u = await server.createUser(`totp${++n}`);
      const agent = new Agent(server.url);
      assert.equal((await agent.login(u.username, u.password)).status, 303);
      const { secret, usedStep } = await enrolTotp(agent);
      await server.gh.accountTransactions.transaction((tx) => lockAccount(tx, u.id, { by: 'cli' }, Date.now()));
      const browser = new Agent(server.url);
      const count = sink.received.length;
      await ask(browser, u.username, 'email');
      const form = await openForm(browser, await linkFor(`${u.username}@example.test`, count + 1));
      assert.match(form.page, /name="code"/, 'the form asks for the code');
      assert.equal((await browser.post('/login/forgot/reset', { ...form.fields, password: NEW, code: '000000' })).status, 401);
      assert.equal(await canSignIn(u.username, NEW), false);
      const step = Math.max(stepNow(), usedStep + 1);
      const done = await browser.post('/login/forgot/reset', { ...form.fields, password: NEW, code: totpCode(secret, step) });
      assert.equal(done.status, 200);
      assert.match(await done.text(), /may sign in again/);
      assert.equal(await server.gh.console.isLocked(u.id), false, 'the code was the second factor: the lock is lifted');
      assert.equal((await new Agent(server.url).login(u.username, NEW)).headers.get('location'), '/login/second-step', 'the new password, then the second step');
    });

    it('an e-mail link alone does not lift a lock', async () => {
      const u = await server.createUser(`locked${++n}`);
      await server.gh.accountTransactions.transaction((tx) => lockAccount(tx, u.id, { by: 'cli' }, Date.now()));
      const browser = new Agent(server.url);
      const count = sink.received.length;
      await ask(browser, u.username, 'email');
      const form = await openForm(browser, await linkFor(`${u.username}@example.test`, count + 1));
      const done = await browser.post('/login/forgot/reset', { ...form.fields, password: NEW });
      assert.equal(done.status, 200);
      assert.doesNotMatch(await done.text(), /may sign in again/);
      assert.equal(await server.gh.console.isLocked(u.id), true);
      assert.equal(await canSignIn(u.username, NEW), false);
    });

    it('by chat: the number is tapped in the linked chat, which is the second factor; the chat is told', async () => {
      const p = await linkedPerson(server, `chat${++n}`);
      const tokens = await signedInWithToken(p.user.username, p.user.password);
      const browser = new Agent(server.url);
      const last = (await p.chat.messages(BOT, 0, 0)).at(-1)?.message_id ?? 0;
      const asked = await ask(browser, p.user.username, 'chat');
      assert.equal(asked.status, 200);
      const number = /id="approval-number">(\d\d)</.exec(await asked.text())?.[1];
      assert.ok(number);
      assert.equal((await browser.get('/login/forgot/reset')).status, 303, 'not before the tap');
      const msg = await nextMessage(p.chat, last, /Password reset/);
      const wrong = buttonsOf(msg).find((b) => /^\d\d$/.test(b.text) && b.text !== number)!;
      assert.ok(wrong);
      const button = buttonsOf(msg).find((b) => b.text === number)!;
      const waiting = browser.get('/login/forgot/wait');
      const pressed = await p.chat.press(BOT, msg.message_id, button.callback_data);
      assert.equal(pressed.status, 200, JSON.stringify(pressed.body));
      assert.deepEqual(await (await waiting).json(), { state: 'approved' });
      const page = await openForm(browser, '/login/forgot/reset');
      assert.equal(page.status, 200, page.page);
      assert.doesNotMatch(page.page, /name="code"/, 'the tap is the second factor');
      const done = await browser.post('/login/forgot/reset', { ...page.fields, password: NEW });
      assert.equal(done.status, 200);
      assert.equal(await canSignIn(p.user.username, NEW), true);
      assert.equal(await refreshError(tokens.refresh), 'invalid_grant');
      assert.equal((await p.browser.get('/account')).status !== 200, true, 'the browser signed in before is signed out');
      // The chat page's own token went with the others; signed in again, the person reads the alert there.
      const chat = new ChatApi(server.bot!.url, { username: p.user.username, token: await chatPageToken(server, { username: p.user.username, password: NEW }) });
      await nextMessage(chat, msg.message_id, /password of your account .* was reset/);
      // A second request's wrong number denies it.
      const other = new Agent(server.url);
      const again = /id="approval-number">(\d\d)</.exec(await (await ask(other, p.user.username, 'chat')).text())?.[1];
      const msg2 = await nextMessage(chat, msg.message_id, /Password reset asked/);
      const wrong2 = buttonsOf(msg2).find((b) => /^\d\d$/.test(b.text) && b.text !== again)!;
      await chat.press(BOT, msg2.message_id, wrong2.callback_data);
      assert.equal((await other.get('/login/forgot/reset')).status, 403, 'a wrong number denies the reset');
    });
  });
}
