import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mailChannel } from '../../src/core/mail/delivery.js';
import { MAIL_ENDPOINT_ID } from '../../src/core/mail/ports.js';
import { DeliveryWorker } from '../../src/core/notify/worker.js';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/core/notify/schedule.js';
import { notifyTransport } from '../../src/core/notify/transport.js';
import { mailSender, type ClosableMailSender } from '../../src/infra/mail-transport.js';
import { createOutbound } from '../../src/infra/outbound/client.js';
import { TestClock } from '../helpers/clock.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { csrfOf, open, signedInAdmin, submit } from '../console/support.js';
import { admin, ADMIN_TOKEN } from '../notify/support.js';
import { SmtpSink } from './support.js';

const LOGIN = { username: 'mailer', password: 'smtp-pa55-9f3kq-never-logged' };

for (const { kind, skip } of await databaseKinds()) {
  describe(`e-mail through the outbox, to a real SMTP server (${kind})`, { skip }, () => {
    let server: TestServer;
    let sink: SmtpSink;
    let worker: DeliveryWorker;
    let sender: ClosableMailSender;
    const clock = new TestClock();
    const outbound = createOutbound({ allowPrivate: true });
    /** Sends everything due now; returns how many attempts were made. */
    const drain = async () => {
      let n = 0;
      for (let k; (k = await worker.runOnce()); ) n += k;
      return n;
    };
    const enqueue = (to: string, url = 'https://id.example.test/verify?token=t0k3n&x=1', name = 'Ada') =>
      server.gh.storage.transaction((tx) => server.gh.mailer.enqueue(tx, { to, template: 'verify-email', data: { url, expiresMinutes: 30, name } }));
    const delivery = (id: string) => server.gh.storage.events.deliveries.get(MAIL_ENDPOINT_ID, id);

    before(async () => {
      sink = await new SmtpSink(LOGIN).start();
      // No `worker` role: the test runs the worker itself, on the controlled clock.
      server = await startServer({
        db: kind, clock,
        env: { GATEHOUSE_ROLES: 'auth', GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, GATEHOUSE_SMTP_URL: `smtp://${LOGIN.username}:${LOGIN.password}@127.0.0.1:${sink.port}` },
      });
      const { gh } = server;
      sender = mailSender(gh.config.smtp!, 5000, { info: () => undefined });
      worker = new DeliveryWorker({
        events: gh.storage.events, clock, webhooks: notifyTransport(outbound.request), chats: notifyTransport(outbound.request), chat: undefined,
        mail: mailChannel({ outbox: gh.storage.mail, sender, from: gh.config.mailFrom, site: gh.mailer.site }), random: () => 0.5,
      }, { timeoutMs: 5000 });
    });
    after(async () => {
      await worker.stop();
      sender.close();
      outbound.close();
      await server.close();
      await sink.stop();
    });

    it('a message queued in a committed transaction arrives with both parts, From, To and Subject', async () => {
      assert.equal(server.gh.mailer.enabled, true);
      const user = await server.createUser('ada');
      // The change and its message in one transaction.
      const id = await server.gh.storage.transaction(async (tx) => {
        return server.gh.mailer.enqueue(tx, {
          to: 'ada@example.test', template: 'verify-email', userId: user.id,
          data: { url: 'https://id.example.test/verify?token=t0k3n&x=1', expiresMinutes: 30, name: '<b>Ada</b>' },
        });
      });
      assert.match(id ?? '', /^msg_/);
      assert.equal(await drain(), 1);
      const [m] = await sink.waitFor(1);
      assert.ok(m);
      assert.equal(m.headers.get('from'), server.gh.config.mailFrom);
      assert.equal(server.gh.config.mailFrom, 'Gatehouse <no-reply@127.0.0.1>');
      assert.equal(m.headers.get('to'), 'ada@example.test');
      assert.equal(m.headers.get('subject'), 'Confirm your e-mail address for Gatehouse');
      assert.equal(m.headers.get('message-id'), `<${id}@127.0.0.1>`);
      assert.equal(m.mailFrom, 'no-reply@127.0.0.1');
      assert.deepEqual(m.rcptTo, ['ada@example.test']);
      assert.equal(m.auth?.username, LOGIN.username, 'the client logged in');
      assert.match(m.headers.get('content-type') ?? '', /^multipart\/alternative/);
      // The text part has the link as it is; the HTML part has it escaped, and the name as text, not markup.
      assert.match(m.text, /^Hello <b>Ada<\/b>,/);
      assert.ok(m.text.includes('https://id.example.test/verify?token=t0k3n&x=1'), m.text);
      assert.ok(m.html.includes('href="https://id.example.test/verify?token=t0k3n&amp;x=1"'), m.html);
      assert.ok(m.html.includes('Hello &lt;b&gt;Ada&lt;/b&gt;,'));
      assert.ok(!m.html.includes('<b>Ada</b>'));
      const d = await delivery(id!);
      assert.equal(d?.status, 'delivered');
      assert.equal(d?.lastStatus, 250);
      // What it said (the link) is erased once delivered; the list keeps whom it went to.
      assert.equal((await server.gh.storage.mail.open(id!))?.to, 'ada@example.test');
      assert.ok((await server.gh.storage.mail.purge()) >= 1);
      assert.equal(await server.gh.storage.mail.open(id!), undefined);
      const listed = (await server.gh.storage.mail.list({ limit: 10 })).find((x) => x.delivery.eventId === id);
      assert.deepEqual([listed?.to, listed?.template, listed?.userId], ['ada@example.test', 'verify-email', user.id]);
    });

    it('a rolled-back transaction sends nothing', async () => {
      const before = sink.received.length;
      let queued: string | undefined;
      await assert.rejects(server.gh.storage.transaction(async (tx) => {
        queued = await server.gh.mailer.enqueue(tx, { to: 'rollback@example.test', template: 'password-reset', data: { url: 'https://id.example.test/reset?t=1', expiresMinutes: 30 } });
        throw new Error('the change failed');
      }), /the change failed/);
      assert.ok(queued);
      assert.equal(await delivery(queued!), undefined);
      assert.equal(await server.gh.storage.mail.open(queued!), undefined);
      assert.equal(await drain(), 0);
      assert.equal(sink.received.length, before);
    });

    it('a bad address or link is refused in the caller\'s transaction, before anything is queued', async () => {
      await assert.rejects(enqueue('not an address'), /not an e-mail address/);
      await assert.rejects(enqueue('a@b.test\r\nBcc: c@d.test'), /not an e-mail address/);
      await assert.rejects(enqueue('ok@example.test', 'javascript:alert(1)'), /http\(s\) link/);
      assert.equal(await drain(), 0);
    });

    it('a burst of messages shares a few connections (nodemailer\'s pool), and every one arrives', async () => {
      const before = sink.received.length;
      sink.maxOpen = sink.open;
      const ids = await Promise.all(Array.from({ length: 24 }, (_, i) => enqueue(`burst${i}@example.test`)));
      assert.equal(await drain(), 24);
      const got = await sink.waitFor(before + 24);
      assert.deepEqual(got.slice(before).flatMap((m) => m.rcptTo).sort(), ids.map((_, i) => `burst${i}@example.test`).sort());
      assert.ok(sink.maxOpen <= 4, `at most 4 connections at once, saw ${sink.maxOpen}`);
    });

    it('the SMTP server down: retried on the schedule, and it arrives once the server is back', async () => {
      const before = sink.received.length;
      await sink.stop();
      const id = await enqueue('later@example.test');
      assert.equal(await drain(), 1);
      let d = await delivery(id!);
      assert.equal(d?.status, 'pending');
      assert.equal(d?.attempts, 1);
      assert.equal(d?.lastStatus, null);
      assert.match(d?.lastError ?? '', /ECONNREFUSED|ECONNECTION|ESOCKET/);
      assert.ok(!(d?.lastError ?? '').includes(LOGIN.password));
      // Backoff honoured: nothing is tried again before the next attempt is due.
      assert.equal(d?.nextAttemptAt, clock.now() + RETRY_DELAYS_MS[0]!);
      assert.equal(await drain(), 0);
      await sink.start();
      clock.advance(RETRY_DELAYS_MS[0]!);
      assert.equal(await drain(), 1);
      d = await delivery(id!);
      assert.equal(d?.status, 'delivered');
      assert.equal(d?.attempts, 2);
      const got = await sink.waitFor(before + 1);
      assert.deepEqual(got.at(-1)?.rcptTo, ['later@example.test']);
      const log = await server.gh.storage.events.deliveries.attempts(MAIL_ENDPOINT_ID, id!);
      assert.deepEqual(log.map((a) => a.ok), [false, true]);
      assert.ok(log.every((a) => !(a.error ?? '').includes(LOGIN.password) && !(a.response ?? '').includes(LOGIN.password)));
    });

    it('a permanent failure (550) is dead-lettered at once, shows in the console, and is sent again from there', async () => {
      sink.rcpt = (address) => (address === 'nobody@example.test' ? { code: 550, message: 'No such user here' } : undefined);
      const id = await enqueue('nobody@example.test');
      assert.equal(await drain(), 1);
      const d = await delivery(id!);
      assert.equal(d?.status, 'failed');
      assert.equal(d?.attempts, 1);
      assert.equal(d?.lastStatus, 550);
      assert.match(d?.lastError ?? '', /No such user here/);

      const root = await signedInAdmin(server);
      const page = await (await open(root, '/admin/mail?status=failed')).text();
      assert.ok(page.includes(id!) && page.includes('nobody@example.test') && page.includes('550'), page);
      assert.ok(page.includes('SMTP to 127.0.0.1:') && !page.includes(LOGIN.password), 'the transport is named without its password');
      // The e-mail endpoint is no webhook: neither the console's list nor the admin API shows, changes or deletes it.
      assert.ok(!(await (await open(root, '/admin/webhooks')).text()).includes('GATEHOUSE_SMTP_URL'));
      const hooks = await admin(server.url, 'GET', '/webhooks');
      assert.deepEqual(hooks.json.webhooks, []);
      assert.equal((await admin(server.url, 'DELETE', `/webhooks/${MAIL_ENDPOINT_ID}`)).status, 404);
      const events = await admin(server.url, 'GET', '/events?limit=100');
      assert.ok(!JSON.stringify(events.json).includes('nobody@example.test'), 'no event lists a message');

      sink.rcpt = () => undefined;
      const csrf = await csrfOf(root, '/admin/mail');
      const res = await submit(root, `/admin/mail/messages/${id}/resend`, { csrf_token: csrf });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /will be sent again/);
      // A delivered or unknown message is not sent again.
      assert.equal((await submit(root, '/admin/mail/messages/msg_unknown/resend', { csrf_token: csrf })).status, 404);
      assert.equal(await drain(), 1);
      assert.equal((await delivery(id!))?.status, 'delivered');
      assert.deepEqual(sink.received.at(-1)?.rcptTo, ['nobody@example.test']);
      assert.equal((await submit(root, `/admin/mail/messages/${id}/resend`, { csrf_token: csrf })).status, 409);
    });

    it('a server that keeps deferring (451): dead-lettered when the schedule is exhausted, then replayed from the console', async () => {
      sink.rcpt = (address) => (address === 'busy@example.test' ? { code: 451, message: 'Try again later' } : undefined);
      const id = await enqueue('busy@example.test');
      for (let i = 0; i < MAX_ATTEMPTS; i++) {
        assert.equal(await drain(), 1, `attempt ${i + 1}`);
        const d = await delivery(id!);
        assert.equal(d?.status, i + 1 < MAX_ATTEMPTS ? 'pending' : 'failed');
        assert.equal(d?.lastStatus, 451);
        clock.advance(RETRY_DELAYS_MS[i] ?? 0);
      }
      assert.equal(await drain(), 0);
      assert.equal((await delivery(id!))?.attempts, MAX_ATTEMPTS);
      const root = await signedInAdmin(server, 'root2');
      assert.ok((await (await open(root, '/admin/mail?status=failed')).text()).includes(id!));
      sink.rcpt = () => undefined;
      const res = await submit(root, '/admin/mail/replay', { csrf_token: await csrfOf(root, '/admin/mail'), window: '604800' });
      assert.equal(res.status, 200);
      assert.match(await res.text(), /1 failed message will be sent again/);
      assert.equal(await drain(), 1);
      assert.equal((await delivery(id!))?.status, 'delivered');
    });
  });
}
