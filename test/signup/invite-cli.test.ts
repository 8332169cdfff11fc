// `gatehouse user invite --email E [--admin] [--ttl S]` (issue 26 item 2, shared/INTERFACE.md "A
// person's account"): prints {"url","expires_at"}; the link signs up once with GATEHOUSE_SIGNUP=invite;
// bad input goes to stderr with a non-zero exit. On SQLite (a file, so the command line opens the
// server's database) and PostgreSQL. Also: `gatehouse user create` records user.created.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { solveChallenge } from 'altcha-lib/v1';
import { generateSecretKey } from '../../src/core/secret-box.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { runCli } from '../helpers/cli.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';

const GOOD = 'violet kettle on the moor';

async function solved(html: string): Promise<string> {
  const raw = /data-challenge="([^"]*)"/.exec(html)?.[1];
  assert.ok(raw, 'the page carries a challenge');
  const c = JSON.parse(raw.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as { algorithm: string; challenge: string; salt: string; signature: string; maxnumber: number };
  const s = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  assert.ok(s);
  return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: s.number, salt: c.salt, signature: c.signature })).toString('base64');
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`gatehouse user invite (${kind})`, { skip, timeout: 120_000 }, () => {
    let server: TestServer;
    const secretKey = generateSecretKey().toString('base64');
    const dir = mkdtempSync(join(tmpdir(), 'gh-invite-'));
    let env: Record<string, string> = {};

    before(async () => {
      const file: Record<string, string> = kind === 'sqlite' ? { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'g.db')}` } : {};
      server = await startServer({ db: kind, env: { ...file, GATEHOUSE_SECRET_KEY: secretKey, GATEHOUSE_SIGNUP: 'invite' } });
      env = { GATEHOUSE_DATABASE_URL: file.GATEHOUSE_DATABASE_URL ?? server.databaseUrl, GATEHOUSE_SECRET_KEY: secretKey, GATEHOUSE_AUTH_URL: server.url, GATEHOUSE_SIGNUP: 'invite' };
    });
    after(async () => {
      await server?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('--json prints {url, expires_at}; the link signs up once, as an administrator with --admin', async () => {
      const started = Date.now();
      const r = await runCli(['user', 'invite', '--email', 'guest@example.test', '--admin', '--ttl', '3600', '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { url: string; expires_at: string };
      assert.deepEqual(Object.keys(out).sort(), ['expires_at', 'url']);
      assert.ok(out.url.startsWith(`${server.url.replace(/\/+$/, '')}/signup?invitation=`), out.url);
      const expires = Date.parse(out.expires_at);
      assert.ok(expires >= started + 3_599_000 && expires <= Date.now() + 3_600_000, out.expires_at);

      const link = new URL(out.url);
      const agent = new Agent(server.url);
      const page = await agent.get(link.pathname + link.search);
      assert.equal(page.status, 200);
      const html = await page.text();
      assert.match(html, /value="guest@example.test"/);
      const res = await agent.post('/signup', { ...parseForm(html).fields, altcha: await solved(html), username: 'guest', email: 'guest@example.test', password: GOOD });
      assert.equal(res.status, 303, await res.clone().text());
      const guest = await server.gh.storage.users.findByUsername('guest');
      assert.ok(guest);
      assert.equal(guest.emailVerified, true);
      assert.equal(await server.gh.console.isAdmin(guest.id), true);

      // Used: refused the second time.
      const again = await new Agent(server.url).get(link.pathname + link.search);
      assert.equal(again.status, 403);

      // Without --admin, and the human output names the link and that nothing was e-mailed.
      const plain = await runCli(['user', 'invite', '--email', 'plain@example.test'], env);
      assert.equal(plain.code, 0, plain.stderr);
      assert.match(plain.stdout, /\/signup\?invitation=\S+/);
      assert.match(plain.stdout, /not e-mailed/);
    });

    it('gatehouse user create records user.created (created_by cli) with the account', async () => {
      const r = await runCli(['user', 'create', '--username', 'carol', '--email', 'carol@example.test', '--password-stdin', '--json'], env, `${GOOD}\n`);
      assert.equal(r.code, 0, r.stderr);
      const { id } = JSON.parse(r.stdout) as { id: string };
      const events = (await server.gh.storage.events.list({ type: 'user.created', limit: 100 })).map((e) => e.data as Record<string, string>);
      assert.deepEqual(events.filter((d) => d.user_id === id), [{ user_id: id, username: 'carol', created_by: 'cli' }]);
      // A refused one (the name is taken) writes neither.
      const dup = await runCli(['user', 'create', '--username', 'carol', '--email', 'c2@example.test', '--password-stdin'], env, `${GOOD}\n`);
      assert.notEqual(dup.code, 0);
      assert.equal((await server.gh.storage.events.list({ type: 'user.created', limit: 100 })).filter((e) => (e.data as { username: string }).username === 'carol').length, 1);
    });

    it('a bad --ttl, a bad or missing --email: an error on stderr, a non-zero exit', async () => {
      for (const args of [['--email', 'x@example.test', '--ttl', 'soon'], ['--email', 'x@example.test', '--ttl', '59'], ['--email', 'x@example.test', '--ttl', '99999999'],
        ['--email', 'x@example.test', '--ttl', '-5'], ['--email', 'not an address'], []]) {
        const r = await runCli(['user', 'invite', ...args, '--json'], env);
        assert.notEqual(r.code, 0, args.join(' '));
        assert.equal(r.stdout, '', args.join(' '));
        assert.ok(r.stderr.length > 0, args.join(' '));
      }
      const ttl = await runCli(['user', 'invite', '--email', 'x@example.test', '--ttl', '59'], env);
      assert.match(ttl.stderr, /ttl/);
    });
  });
}
