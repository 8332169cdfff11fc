// The console's user pages (issue 26, item 6): create with a temporary password, edit the name and
// e-mail, send a reset link (a real SMTP server receives it), delete after a confirmation page
// (no script); each an admin.action. SQLite and PostgreSQL.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SmtpSink } from '../mail/support.js';
import { csrfOf, open, signedInAdmin, submit } from '../console/support.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`the console's user pages (${kind})`, { skip, timeout: 120_000 }, () => {
    let server: TestServer;
    let sink: SmtpSink;
    let admin: Agent;
    before(async () => {
      sink = await new SmtpSink().start();
      server = await startServer({ db: kind, env: { GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${sink.port}` } });
      admin = await signedInAdmin(server, 'root');
    });
    after(async () => {
      await server?.close();
      await sink?.stop();
    });
    const actions = async () => (await server.gh.storage.events.list({ type: 'admin.action', limit: 100 })).map((e) => (e.data as { action: string }).action);

    it('create with a temporary password, edit, send a reset link, delete with a confirmation page', async () => {
      const csrf = await csrfOf(admin, '/admin/users');
      assert.match(await (await open(admin, '/admin/users')).text(), /href="\/admin\/users\/new"/);
      const weak = await submit(admin, '/admin/users/new', { csrf_token: csrf, username: 'dee', email: 'dee@example.test', name: '', password: 'password' });
      assert.equal(weak.status, 400, 'the password policy applies');
      const made = await submit(admin, '/admin/users/new', { csrf_token: csrf, username: 'dee', email: 'dee@example.test', name: 'Dee', password: 'temporary passphrase 1' });
      assert.equal(made.status, 201);
      const dee = (await server.gh.storage.users.findByUsername('dee'))!;
      assert.equal((await new Agent(server.url).login('dee', 'temporary passphrase 1')).status, 303);
      const created = (await server.gh.storage.events.list({ type: 'user.created', limit: 10 })).find((e) => e.userId === dee.id);
      assert.equal((created!.data as { created_by: string }).created_by, 'admin');

      const base = `/admin/users/${dee.id}`;
      assert.match(await (await open(admin, base)).text(), new RegExp(`href="${base}/manage"`));
      const edited = await submit(admin, `${base}/edit`, { csrf_token: csrf, name: 'Dee Dee', email: 'dee@new.example.test' });
      assert.equal(edited.status, 200);
      assert.match(await edited.text(), /Saved: name and email/);
      assert.equal((await server.gh.storage.users.get(dee.id))!.email, 'dee@new.example.test');
      assert.equal((await submit(admin, `${base}/edit`, { csrf_token: csrf, name: 'x', email: 'nope' })).status, 400);

      const n = sink.received.length;
      const sent = await submit(admin, `${base}/reset-link`, { csrf_token: csrf });
      assert.equal(sent.status, 200);
      // The notice of the changed address (to the old one) may arrive first.
      let mail;
      for (let i = n + 1; i <= n + 3 && !mail; i++) mail = (await sink.waitFor(i)).find((m) => m.rcptTo.includes('dee@new.example.test') && /\/login\/forgot\/reset\?token=/.test(m.text));
      assert.ok(mail, 'the reset link arrives at the account\'s address');

      const confirm = await open(admin, `${base}/delete`);
      assert.equal(confirm.status, 200);
      assert.match(await confirm.text(), /Delete dee\?/);
      assert.equal((await submit(admin, `${base}/delete`, { csrf_token: csrf })).status, 400, 'not without the confirmation page\'s form');
      assert.ok(await server.gh.storage.users.get(dee.id));
      assert.equal((await submit(admin, `${base}/delete`, { csrf_token: 'forged', confirm: 'dee' })).status, 403);
      const deleted = await submit(admin, `${base}/delete`, { csrf_token: csrf, confirm: 'dee' });
      assert.equal(deleted.status, 200);
      assert.match(await deleted.text(), /dee was deleted/);
      assert.equal(await server.gh.storage.users.get(dee.id), undefined);
      assert.deepEqual((await actions()).filter((x) => x.startsWith('user.')).sort(), ['user.create', 'user.delete', 'user.send_reset', 'user.update']);
    });
  });
}
