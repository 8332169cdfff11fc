import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { solveChallenge } from 'altcha-lib/v1';
import { sha256 } from '../../src/core/crypto.js';
import { checkPassword } from '../../src/core/account/password-policy.js';
import { Agent, parseForm } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { freshRedisPrefix, REDIS_URL, redisAvailable } from '../helpers/redis.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { SmtpSink } from '../mail/support.js';

const GOOD = 'violet kettle on the moor';

/** Solves the page's challenge as its script would, with altcha-lib's own solver. */
async function solved(html: string): Promise<string> {
  const raw = /data-challenge="([^"]*)"/.exec(html)?.[1];
  assert.ok(raw, 'the page carries a challenge');
  const c = JSON.parse(raw.replace(/&quot;/g, '"').replace(/&amp;/g, '&')) as { algorithm: string; challenge: string; salt: string; signature: string; maxnumber: number };
  const s = await solveChallenge(c.challenge, c.salt, c.algorithm, c.maxnumber).promise;
  assert.ok(s, 'solvable');
  return Buffer.from(JSON.stringify({ algorithm: c.algorithm, challenge: c.challenge, number: s.number, salt: c.salt, signature: c.signature })).toString('base64');
}

/** Opens /signup and sends its form with these fields (the challenge solved unless `altcha` is given). */
async function signUp(agent: Agent, fields: Record<string, string>, query = ''): Promise<Response> {
  const page = await agent.get(`/signup${query}`);
  assert.equal(page.status, 200, `GET /signup${query}`);
  const html = await page.text();
  const form = parseForm(html);
  return agent.post('/signup', { ...form.fields, altcha: await solved(html), ...fields });
}

const skipRedis = (await redisAvailable()) ? false : 'Redis not reachable';

for (const { kind, skip } of await databaseKinds()) {
  describe(`sign-up (${kind})`, { skip }, () => {
    const servers: TestServer[] = [];
    after(async () => {
      for (const s of servers) await s.close();
    });
    const start = async (env: Record<string, string>) => {
      const s = await startServer({ db: kind, env });
      servers.push(s);
      return s;
    };

    it('open: the page form with its CSRF token and proof of work makes an account and signs it in; a solution counts once', async () => {
      const s = await start({ GATEHOUSE_SIGNUP: 'open' });
      const login = await new Agent(s.url).get('/login');
      assert.match(await login.text(), /href="\/signup"/);
      const page = await new Agent(s.url).get('/signup');
      assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self';/);
      const agent = new Agent(s.url);
      const res = await signUp(agent, { username: 'newcomer', email: 'newcomer@example.test', password: GOOD });
      assert.equal(res.status, 303, await res.clone().text());
      const home = await agent.get('/');
      assert.match(await home.text(), /newcomer/);
      const user = await s.gh.storage.users.findByUsername('newcomer');
      assert.equal(user?.email, 'newcomer@example.test');
      // The sign-up signed in with its password: it works at the login page too.
      assert.equal((await new Agent(s.url).login('newcomer', GOOD)).status, 303);
      // A solution sent twice: the second is refused.
      const other = new Agent(s.url);
      const html = await (await other.get('/signup')).text();
      const fields = { ...parseForm(html).fields, altcha: await solved(html), username: 'second', email: 's@example.test', password: GOOD };
      assert.equal((await other.post('/signup', fields)).status, 303);
      const again = new Agent(s.url);
      const form2 = parseForm(await (await again.get('/signup')).text());
      const replay = await again.post('/signup', { ...form2.fields, altcha: fields.altcha, username: 'third', email: 't@example.test', password: GOOD });
      assert.equal(replay.status, 400);
      assert.match(await replay.text(), /did not finish, or was used already/);
      // No solution, a forged CSRF token.
      assert.equal((await again.post('/signup', { ...form2.fields, altcha: '', username: 'third', email: 't@example.test', password: GOOD })).status, 400);
      assert.equal((await again.post('/signup', { ...form2.fields, csrf_token: 'x', username: 'third', email: 't@example.test', password: GOOD })).status, 403);
      assert.equal(await s.gh.storage.users.findByUsername('third'), undefined);
    });

    it('with SMTP, the new address gets a link that verifies it; an invited address is verified already', async () => {
      const smtp = await new SmtpSink().start();
      try {
        const s = await start({ GATEHOUSE_SIGNUP: 'open', GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
        const agent = new Agent(s.url);
        assert.equal((await signUp(agent, { username: 'mailed', email: 'mailed@example.test', password: GOOD })).status, 303);
        assert.equal((await s.gh.storage.users.findByUsername('mailed'))?.emailVerified, false);
        const [mail] = await smtp.waitFor(1);
        assert.deepEqual(mail!.rcptTo, ['mailed@example.test']);
        const link = /https?:\/\/\S+\/account\/verify-email\?token=[\w-]+/.exec(mail!.text)?.[0];
        assert.ok(link, mail!.text);
        assert.equal((await new Agent(s.url).get(new URL(link).pathname + new URL(link).search)).status, 200);
        assert.equal((await s.gh.storage.users.findByUsername('mailed'))?.emailVerified, true);
        const { url } = await s.gh.signup.invite({ email: 'invited@example.test', invitedBy: 'cli' });
        await smtp.waitFor(2);
        assert.match(smtp.received[1]!.text, /signup\?invitation=/);
        const query = new URL(url).search;
        assert.equal((await signUp(new Agent(s.url), { username: 'invited', email: 'invited@example.test', password: GOOD }, query)).status, 303);
        assert.equal((await s.gh.storage.users.findByUsername('invited'))?.emailVerified, true);
      } finally {
        await smtp.stop();
      }
    });

    it('off (the default): /signup says so, the login page does not link it', async () => {
      const s = await start({});
      const agent = new Agent(s.url);
      const res = await agent.get('/signup');
      assert.equal(res.status, 404);
      assert.match(await res.text(), /Sign-up is off/);
      assert.equal((await agent.post('/signup', { username: 'x', email: 'x@example.test', password: GOOD })).status, 404);
      assert.doesNotMatch(await (await agent.get('/login')).text(), /href="\/signup"/);
    });

    it('invite: refused without an invitation; an invitation works once; a used or expired one is refused', async () => {
      const s = await start({ GATEHOUSE_SIGNUP: 'invite' });
      const agent = new Agent(s.url);
      assert.equal((await agent.get('/signup')).status, 403);
      assert.doesNotMatch(await (await agent.get('/login')).text(), /href="\/signup"/);
      const { url, expiresAt } = await s.gh.signup.invite({ email: 'guest@example.test', admin: true, invitedBy: 'cli' });
      assert.ok(expiresAt > Date.now());
      const token = new URL(url).searchParams.get('invitation')!;
      const query = `?invitation=${token}`;
      const page = await agent.get(`/signup${query}`);
      assert.match(await page.text(), /value="guest@example.test"/);
      const res = await signUp(agent, { username: 'guest', email: 'guest@example.test', password: GOOD }, query);
      assert.equal(res.status, 303);
      const guest = await s.gh.storage.users.findByUsername('guest');
      assert.ok(guest);
      assert.equal(await s.gh.console.isAdmin(guest.id), true, 'an --admin invitation makes an administrator');
      // Used: the page and the form both refuse it.
      const later = new Agent(s.url);
      const used = await later.get(`/signup${query}`);
      assert.equal(used.status, 403);
      assert.match(await used.text(), /used already or has expired/);
      // Without an invitation field the form is refused too.
      assert.equal((await later.post('/signup', { username: 'y', email: 'y@example.test', password: GOOD })).status, 403);
      // Expired.
      const now = Date.now();
      await s.gh.signup.invite({ email: 'late@example.test', invitedBy: 'cli' });
      await (s.gh.storage as unknown as { invitations: { create(i: object): Promise<void> } }).invitations.create({
        tokenHash: sha256('expired-token'), email: 'late@example.test', admin: false, invitedBy: 'cli', createdAt: now - 2000, expiresAt: now - 1000,
      });
      assert.equal((await later.get('/signup?invitation=expired-token')).status, 403);
    });

    it('two sign-ups with one invitation at once make one account', async () => {
      const s = await start({ GATEHOUSE_SIGNUP: 'invite' });
      const { url } = await s.gh.signup.invite({ email: 'race@example.test', invitedBy: 'cli' });
      const query = `?invitation=${new URL(url).searchParams.get('invitation')}`;
      const prepared = await Promise.all(['race1', 'race2', 'race3'].map(async (name) => {
        const a = new Agent(s.url);
        const html = await (await a.get(`/signup${query}`)).text();
        return { a, fields: { ...parseForm(html).fields, altcha: await solved(html), username: name, email: 'race@example.test', password: GOOD } };
      }));
      const answers = await Promise.all(prepared.map(({ a, fields }) => a.post('/signup', fields)));
      assert.deepEqual(answers.map((r) => r.status).sort(), [303, 403, 403]);
      const made = await Promise.all(['race1', 'race2', 'race3'].map((n) => s.gh.storage.users.findByUsername(n)));
      assert.equal(made.filter(Boolean).length, 1);
    });

    it('short, common and own-name passwords are refused with a clear message; a taken username says only that', async () => {
      const s = await start({ GATEHOUSE_SIGNUP: 'open' });
      await s.createUser('taken');
      const cases: [string, string, RegExp][] = [
        ['shorty', 'short', /at least 8 characters/],
        ['common', 'password1', /too common/],
        ['common2', 'iloveyou', /too common/],
        ['common3', 'Baseball1', /too common/],
        ['ownname1', 'ownname1', /must not be your username/],
      ];
      for (const [username, password, message] of cases) {
        const res = await signUp(new Agent(s.url), { username, email: `${username}@example.test`, password });
        assert.equal(res.status, 400, username);
        assert.match(await res.text(), message);
        assert.equal(await s.gh.storage.users.findByUsername(username), undefined);
      }
      const dup = await signUp(new Agent(s.url), { username: 'TAKEN', email: 'someone@example.test', password: GOOD });
      assert.equal(dup.status, 409);
      const text = await dup.text();
      assert.match(text, /This username is taken/);
      assert.doesNotMatch(text, /taken@example\.test/);
      assert.equal(checkPassword('correct horse battery staple').ok, true);
    });

    it('at most 5 sign-ups per address an hour, however many arrive at once', async () => {
      const s = await start({ GATEHOUSE_SIGNUP: 'open' });
      const names = Array.from({ length: 8 }, (_, i) => `burst${i}`);
      const prepared = await Promise.all(names.map(async (name) => {
        const a = new Agent(s.url);
        const html = await (await a.get('/signup')).text();
        return { a, fields: { ...parseForm(html).fields, altcha: await solved(html), username: name, email: `${name}@example.test`, password: GOOD } };
      }));
      const answers = await Promise.all(prepared.map(({ a, fields }) => a.post('/signup', fields)));
      const statuses = answers.map((r) => r.status);
      assert.equal(statuses.filter((x) => x === 303).length, 5, String(statuses));
      const refused = answers.filter((r) => r.status === 429);
      assert.equal(refused.length, 3);
      for (const r of refused) {
        assert.ok(Number(r.headers.get('retry-after')) > 0);
        assert.match(await r.text(), /Too many sign-ups/);
      }
    });

    it('with sessions in Redis the new person is signed in', { skip: skipRedis }, async () => {
      const s = await start({ GATEHOUSE_SIGNUP: 'open', GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: freshRedisPrefix() });
      const agent = new Agent(s.url);
      assert.equal((await signUp(agent, { username: 'redisperson', email: 'r@example.test', password: GOOD })).status, 303);
      assert.match(await (await agent.get('/')).text(), /redisperson/);
    });
  });
}
