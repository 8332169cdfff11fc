import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.js';
import { MAIL_ENDPOINT_ID } from '../../src/core/mail/ports.js';
import { startGatehouse, type RunningGatehouse } from '../../src/server.js';
import { databaseKinds, dropDatabase, freshDatabaseUrl, type DbKind } from '../helpers/db.js';
import { SmtpSink } from './support.js';

const LOGIN = { username: 'mailer', password: 'pw-7Hq2-never-in-a-log' };

/** A whole Gatehouse (the worker role included) whose log lines, at every level, are kept. */
async function startLogged(kind: DbKind, env: Record<string, string>): Promise<{ running: RunningGatehouse; lines: string[]; close(): Promise<void> }> {
  const databaseUrl = freshDatabaseUrl(kind);
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, cb) { lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)); cb(); } });
  const config = loadConfig({ GATEHOUSE_DATABASE_URL: databaseUrl, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'trace', ...env });
  const running = await startGatehouse(config, { logger: pino({ level: 'trace', base: undefined }, sink) });
  return { running, lines, close: async () => { await running.close(); await dropDatabase(databaseUrl); } };
}

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const reset = (gh: RunningGatehouse['gh'], to: string) => gh.storage.transaction((tx) => gh.mailer.enqueue(tx, {
  to, template: 'password-reset', data: { url: 'https://id.example.test/login/reset?token=r353t-t0k3n', expiresMinutes: 30 },
}));

for (const { kind, skip } of await databaseKinds()) {
  describe(`e-mail sent by the worker role of a running server (${kind})`, { skip }, () => {
    const closing: (() => Promise<void>)[] = [];
    after(async () => {
      for (const close of closing.reverse()) await close();
    });

    it('log: writes each message, its link included, to the server log', async () => {
      const s = await startLogged(kind, { GATEHOUSE_SMTP_URL: 'log:', GATEHOUSE_AUTH_URL: 'https://id.example.test' });
      closing.push(s.close);
      const { gh } = s.running;
      assert.equal(gh.mailer.enabled, true);
      const id = await reset(gh, 'dev@example.test');
      const line = await until('the log line', () => s.lines.find((l) => l.includes('dev@example.test') && l.includes('"mail"')));
      const logged = JSON.parse(line) as { level: number; mail: { from: string; to: string; subject: string; text: string; message_id: string } };
      assert.equal(logged.level, 30, 'info');
      assert.equal(logged.mail.from, 'Gatehouse <no-reply@id.example.test>');
      assert.equal(logged.mail.subject, 'Reset your Gatehouse password');
      assert.equal(logged.mail.message_id, `<${id}@id.example.test>`);
      assert.ok(logged.mail.text.includes('https://id.example.test/login/reset?token=r353t-t0k3n'), logged.mail.text);
      const d = await until('delivered', async () => {
        const x = await gh.storage.events.deliveries.get(MAIL_ENDPOINT_ID, id!);
        return x?.status === 'delivered' ? x : undefined;
      });
      assert.equal(d.attempts, 1);
    });

    it('SMTP: the running worker retries while the server is down and delivers once it is back; the password is in no log line', async () => {
      const smtp = await new SmtpSink(LOGIN).start();
      closing.push(() => smtp.stop());
      const s = await startLogged(kind, { GATEHOUSE_SMTP_URL: `smtp://${LOGIN.username}:${encodeURIComponent(LOGIN.password)}@127.0.0.1:${smtp.port}` });
      closing.push(s.close);
      const { gh } = s.running;
      await smtp.stop();
      const id = await reset(gh, 'back@example.test');
      const failed = await until('a failed attempt', async () => {
        const x = await gh.storage.events.deliveries.get(MAIL_ENDPOINT_ID, id!);
        return x && x.attempts >= 1 ? x : undefined;
      });
      assert.equal(failed.status, 'pending');
      await smtp.start();
      // The schedule's first wait is 5 s (±10 %).
      const [m] = await smtp.waitFor(1, 15_000);
      assert.deepEqual(m?.rcptTo, ['back@example.test']);
      assert.equal(m?.auth?.username, LOGIN.username);
      assert.equal(m?.headers.get('subject'), 'Reset your Gatehouse password');
      assert.ok(m?.text.includes('token=r353t-t0k3n'));
      const d = await until('delivered', async () => {
        const x = await gh.storage.events.deliveries.get(MAIL_ENDPOINT_ID, id!);
        return x?.status === 'delivered' ? x : undefined;
      });
      assert.equal(d.attempts, 2);
      assert.ok(s.lines.length > 0);
      for (const l of s.lines) assert.ok(!l.includes(LOGIN.password) && !l.includes(encodeURIComponent(LOGIN.password)), l);
      // A message sent by SMTP is not written to the log.
      assert.ok(!s.lines.some((l) => l.includes('r353t-t0k3n')));
    });

    it('unset: nothing is e-mailed, and callers can tell', async () => {
      const s = await startLogged(kind, { GATEHOUSE_ROLES: 'auth,worker' });
      closing.push(s.close);
      const { gh } = s.running;
      assert.equal(gh.mailer.enabled, false);
      assert.equal(await reset(gh, 'nobody@example.test'), undefined);
      assert.deepEqual(await gh.storage.mail.list({ limit: 10 }), []);
    });
  });
}
