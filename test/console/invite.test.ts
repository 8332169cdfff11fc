// The console's "Invite someone" (issue 26 item 2): the link shown once on the POST's answer (no-store),
// e-mailed with SMTP, recorded as admin.action user.invite, CSRF like every console form; the link
// signs up once with GATEHOUSE_SIGNUP=invite. SQLite and PostgreSQL.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { solveChallenge } from 'altcha-lib/v1';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { signedIn } from '../helpers/people.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SmtpSink } from '../mail/support.js';
import { csrfOf, open, signedInAdmin, submit } from './support.js';

async function solved(html: string): Promise<string> {
  const raw = /data-challenge="([^"]*)"/.exec(html)?.[1];
  assert.ok(raw, 'the page carries a challenge');
  const c = JSON.parse(raw.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as { algorithm: string; challenge: string; salt: string; signature: string; maxnumber: number };
  const s = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  assert.ok(s);
  return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: s.number, salt: c.salt, signature: c.signature })).toString('base64');
}

const linkOf = (html: string) => /id="invitation-url"[^>]*value="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&');

for (const { kind, skip } of await databaseKinds()) describe(`console: invite someone (${kind})`, { skip, timeout: 120_000 }, () => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
  });
  const start = async (env: Record<string, string>) => {
    const s = await startServer({ db: kind, env: { GATEHOUSE_SIGNUP: 'invite', ...env } });
    servers.push(s);
    return s;
  };
  const inviteEvents = async (s: TestServer) => (await s.gh.storage.events.list({ type: 'admin.action', limit: 100 }))
    .map((e) => e.data as Record<string, string>).filter((d) => d.action === 'user.invite');

  it('the users page links the form; the POST shows the link once; it signs up once as an administrator; recorded', async () => {
    const s = await start({});
    const admin = await signedInAdmin(s, 'root');
    assert.match(await (await open(admin, '/admin/users')).text(), /href="\/admin\/users\/invite"/);
    const formPage = await open(admin, '/admin/users/invite');
    assert.equal(formPage.status, 200);
    assert.match(await formPage.text(), /Nothing is e-mailed/);
    const csrf = await csrfOf(admin, '/admin/users/invite');
    const res = await submit(admin, '/admin/users/invite', { csrf_token: csrf, email: 'newboss@example.test', admin: 'true' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const html = await res.text();
    assert.match(html, /Nothing was e-mailed/);
    const url = linkOf(html) ?? '';
    assert.ok(url.startsWith(`${s.url.replace(/\/+$/, '')}/signup?invitation=`), html);
    // Shown only on that answer: the form page does not carry it.
    assert.doesNotMatch(await (await open(admin, '/admin/users/invite')).text(), new RegExp(new URL(url).searchParams.get('invitation')!));
    const [event] = await inviteEvents(s);
    assert.equal(event?.admin_username, 'root');
    assert.equal(event?.target_id, 'newboss@example.test');

    const link = new URL(url);
    const agent = new Agent(s.url);
    const page = await (await agent.get(link.pathname + link.search)).text();
    const made = await agent.post('/signup', { ...parseForm(page).fields, altcha: await solved(page), username: 'newboss', email: 'newboss@example.test', password: 'violet kettle on the moor' });
    assert.equal(made.status, 303);
    const user = await s.gh.storage.users.findByUsername('newboss');
    assert.ok(user);
    assert.equal(await s.gh.console.isAdmin(user.id), true);
    assert.equal((await new Agent(s.url).get(link.pathname + link.search)).status, 403, 'used once');
  });

  it('a bad address is refused beside the form; a forged CSRF token and a non-administrator get 403; nothing recorded', async () => {
    const s = await start({});
    const admin = await signedInAdmin(s, 'root');
    const csrf = await csrfOf(admin, '/admin/users/invite');
    const bad = await submit(admin, '/admin/users/invite', { csrf_token: csrf, email: 'not an address' });
    assert.equal(bad.status, 400);
    const text = await bad.text();
    assert.match(text, /not a valid address/);
    assert.equal(linkOf(text), undefined);
    assert.equal((await submit(admin, '/admin/users/invite', { csrf_token: 'forged', email: 'x@example.test' })).status, 403);
    const person = await signedIn(s, 'mallory');
    assert.equal((await open(person, '/admin/users/invite')).status, 403);
    assert.equal((await submit(person, '/admin/users/invite', { csrf_token: csrf, email: 'x@example.test' })).status, 403);
    assert.deepEqual(await inviteEvents(s), []);
  });

  it('with SMTP the page says it was e-mailed, and the e-mail carries the same link', async () => {
    const smtp = await new SmtpSink().start();
    try {
      const s = await start({ GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
      const admin = await signedInAdmin(s, 'root');
      const csrf = await csrfOf(admin, '/admin/users/invite');
      const html = await (await submit(admin, '/admin/users/invite', { csrf_token: csrf, email: 'mailed@example.test' })).text();
      assert.match(html, /It was e-mailed to that address/);
      const url = linkOf(html);
      assert.ok(url);
      const [mail] = await smtp.waitFor(1);
      assert.deepEqual(mail!.rcptTo, ['mailed@example.test']);
      assert.ok(mail!.text.includes(url), mail!.text);
    } finally {
      await smtp.stop();
    }
  });
});
