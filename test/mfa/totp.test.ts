import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKinds } from '../helpers/db.js';
import { Agent } from '../helpers/agent.js';
import { signedIn } from '../helpers/people.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { enrolTotp, formFor, passwordStep, stepNow, totpCode } from './support.js';

for (const { kind, skip } of await databaseKinds()) {
  describe(`authenticator app and recovery codes (${kind})`, { skip }, () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ db: kind });
    });
    after(() => server.close());

    it('enrols with a confirmed code, asks for the second step, refuses a replayed code, burns recovery codes once, refuses the password grant', async () => {
      const alice = await signedIn(server, 'alice');
      const { secret, recoveryCodes, usedStep } = await enrolTotp(alice);
      const pw = alice.user.password;

      // The code that confirmed the app is used: refused at the second step within its period.
      const first = await passwordStep(server.url, 'alice', pw);
      const replay = await first.agent.post('/login/second-step', { ...formFor(first.page, '/login/second-step'), code: totpCode(secret, usedStep) });
      assert.equal(replay.status, 401);
      assert.match(await replay.text(), /not right, or it was already used/);
      assert.equal(first.agent.cookie('gh_session'), undefined);

      // The next step's code (RFC 6238 §5.2 allows one step of drift) signs in, once.
      const next = totpCode(secret, stepNow() + 1);
      const ok = await first.agent.post('/login/second-step', { ...formFor(first.page, '/login/second-step'), code: next });
      assert.equal(ok.status, 303);
      assert.equal(ok.headers.get('location'), '/');
      assert.ok(first.agent.cookie('gh_session'));
      // The pending login was single use.
      assert.equal((await first.agent.post('/login/second-step', { ...formFor(first.page, '/login/second-step'), code: next })).status, 403);

      const second = await passwordStep(server.url, 'alice', pw);
      assert.equal((await second.agent.post('/login/second-step', { ...formFor(second.page, '/login/second-step'), code: next })).status, 401, 'a used code is refused again');

      // A recovery code works once, with or without its hyphen and in any case.
      const r = await second.agent.post('/login/second-step', { ...formFor(second.page, '/login/second-step'), code: recoveryCodes[0]!.toUpperCase().replace('-', ' ') });
      assert.equal(r.status, 303);
      const third = await passwordStep(server.url, 'alice', pw);
      assert.equal((await third.agent.post('/login/second-step', { ...formFor(third.page, '/login/second-step'), code: recoveryCodes[0]! })).status, 401);
      assert.equal((await third.agent.post('/login/second-step', { ...formFor(third.page, '/login/second-step'), code: recoveryCodes[1]! })).status, 303);

      // The password grant has no second step: refused with a clear description.
      const client = await server.createClient({ name: 'Legacy', grantTypes: ['password'], redirectUris: [], scope: 'user' });
      const grant = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: 'alice', password: pw }),
      });
      assert.equal(grant.status, 400);
      const body = await grant.json() as { error: string; error_description: string };
      assert.equal(body.error, 'invalid_grant');
      assert.match(body.error_description, /second factor/);
    });

    it('removing the app asks for the password or a code', async () => {
      const bob = await signedIn(server, 'bob');
      const { recoveryCodes } = await enrolTotp(bob);
      const page = await (await bob.get('/account/security')).text();
      const form = formFor(page, '/account/security/totp/remove');
      assert.equal((await bob.post('/account/security/totp/remove', form)).status, 400);
      assert.equal((await bob.post('/account/security/totp/remove', { ...form, password: 'wrong password' })).status, 401);
      assert.equal((await bob.post('/account/security/totp/remove', { ...form, code: '000000' })).status, 401);
      const removed = await bob.post('/account/security/totp/remove', { ...form, code: recoveryCodes[0]! });
      assert.equal(removed.status, 303);
      // The password alone signs in again; the recovery codes went with the last factor.
      const again = new Agent(server.url);
      const res = await again.login('bob', bob.user.password);
      assert.equal(res.headers.get('location'), '/');
      assert.match(await (await bob.get('/account/security')).text(), /0 unused/);
    });

    it('counts wrong second-step codes with the password limiter: locked after five', async () => {
      const carol = await signedIn(server, 'carol');
      const { secret } = await enrolTotp(carol);
      const { agent, page } = await passwordStep(server.url, 'carol', carol.user.password);
      const fields = formFor(page, '/login/second-step');
      const wrong = totpCode(secret, stepNow() + 5);
      for (let i = 0; i < 5; i++) assert.equal((await agent.post('/login/second-step', { ...fields, code: wrong })).status, 401);
      const locked = await agent.post('/login/second-step', { ...fields, code: totpCode(secret, stepNow()) });
      assert.equal(locked.status, 429);
      assert.ok(Number(locked.headers.get('retry-after')) > 0);
      assert.equal(agent.cookie('gh_session'), undefined);
    });

    it('answers bad input with a clear page, never a 500', async () => {
      const dave = await signedIn(server, 'dave');
      const page = await (await dave.get('/account/security')).text();
      const csrf = formFor(page, '/account/security/totp/start');
      const confirm = async (code: string) => (await dave.post('/account/security/totp/confirm', { ...csrf, code })).status;
      await dave.post('/account/security/totp/start', csrf);
      for (const code of ['', 'abcdef', '1234567', '12345', '１２３４５６', 'x'.repeat(5000)]) assert.equal(await confirm(code), 400, code.slice(0, 10));
      const dup = await dave.request('/account/security/totp/confirm', {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf_token=${encodeURIComponent(csrf.csrf_token!)}&code=1&code=2`,
      });
      assert.ok(dup.status === 400, String(dup.status));
      assert.equal((await dave.post('/account/security/totp/confirm', { code: '123456' })).status, 403, 'no CSRF token');
      assert.equal((await dave.request('/account/security/totp/confirm', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status, 400);
      assert.equal((await dave.post('/account/security/chat-approval', { ...csrf, enabled: 'maybe' })).status, 400);
      assert.equal((await dave.post('/account/security/chat-approval', { ...csrf, enabled: 'on' })).status, 409, 'no linked chat');
      assert.equal((await dave.post('/account/security/totp/remove', { ...csrf, password: 'p'.repeat(2000) })).status, 400);
      // Signed out: the security page asks to sign in.
      const stranger = new Agent(server.url);
      assert.equal((await stranger.get('/account/security')).status, 302);
      assert.equal((await stranger.post('/account/security/totp/start', { csrf_token: 'x' })).status, 303);
      // The second step without a pending login, with a forged one, or with bad codes.
      assert.equal((await stranger.get('/login/second-step')).status, 400);
      assert.equal((await stranger.post('/login/second-step', { csrf_token: 'x', code: '123456' })).status, 403);
      const eve = await signedIn(server, 'eve');
      await enrolTotp(eve);
      const { agent, page: step } = await passwordStep(server.url, 'eve', eve.user.password);
      const fields = formFor(step, '/login/second-step');
      assert.equal((await agent.post('/login/second-step', { ...fields, code: '' })).status, 400);
      assert.equal((await agent.post('/login/second-step', { ...fields, code: 'y'.repeat(65) })).status, 400);
      assert.equal((await agent.post('/login/second-step/approved', fields)).status, 400, 'no approval was asked for');
      const wait = await agent.get('/login/second-step/wait');
      assert.equal(wait.status, 200);
      assert.deepEqual(await wait.json(), { state: 'expired' });
    });
  });
}
