/**
 * Brute-force limits on passwords (RFC 6819 §4.4.3.6, §5.1.4.2.3): five
 * failures lock an account name for the window, whether or not the account
 * exists and in a way that cannot tell the two apart; twenty failures lock
 * an address. The login form and the password grant share the counters.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { TestClock } from '../helpers/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { basic, expectOAuthError, post } from './support.js';

const PASSWORD = 'correct horse battery staple';

/** Signs in through the form; returns the status and the page with the name typed replaced. */
async function attempt(agent: Agent, username: string, password: string): Promise<{ status: number; page: string }> {
  const form = parseForm(await (await agent.get('/login')).text());
  const res = await agent.post('/login', { ...form.fields, username, password });
  return { status: res.status, page: (await res.text()).replaceAll(username, 'NAME') };
}

describe('login lockout', () => {
  let server: TestServer;
  let clock: TestClock;
  let grantClient: { id: string; secret: string | undefined };
  before(async () => {
    clock = new TestClock();
    server = await startServer({ clock });
    await server.createUser('quinn');
    grantClient = await server.createClient({ grantTypes: ['password'], redirectUris: [] });
  });
  after(() => server.close());

  const passwordGrant = (username: string, password: string) =>
    post(server.url, '/oauth/token', { grant_type: 'password', username, password }, { authorization: basic(grantClient.id, grantClient.secret!) });

  // Guards the per-account `peek`/`hit` in src/core/login.ts `LoginGuard.attempt`,
  // keyed on the name as typed so that a missing account locks the same way.
  it('locks a name after 5 failures, the same way for an existing and a missing account', async () => {
    const agent = new Agent(server.url);
    const runs: Record<string, { status: number; page: string }[]> = {};
    for (const name of ['quinn', 'no-such-user']) {
      runs[name] = [];
      for (let i = 0; i < 7; i++) runs[name]!.push(await attempt(agent, name, `wrong password ${i}`));
    }
    assert.deepEqual(runs.quinn!.map((r) => r.status), [401, 401, 401, 401, 401, 429, 429]);
    assert.deepEqual(runs['no-such-user'], runs.quinn, 'the pages tell nothing about whether the account exists');

    // Locked means locked: the right password does not get in during the window…
    assert.equal((await attempt(agent, 'quinn', PASSWORD)).status, 429);
    // …nor through the password grant, which shares the counter, and says the same for both names.
    const grants = await Promise.all(['quinn', 'no-such-user'].map(async (n) => expectOAuthError(await passwordGrant(n, PASSWORD), 400, 'invalid_grant')));
    assert.deepEqual(grants[0], grants[1]);
    assert.match(grants[0]!.error_description ?? '', /too many/);

    // The name typed in another case is the same account.
    assert.equal((await attempt(agent, 'QUINN', PASSWORD)).status, 429);

    // After the window the right password works again.
    clock.advance(15 * 60_000 + 1);
    assert.equal((await attempt(agent, 'quinn', PASSWORD)).status, 303);
  });
});

describe('per-address lockout', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await server.createUser('rose');
  });
  after(() => server.close());

  // Guards the per-address `peek`/`hit` in src/core/login.ts: 20 failures on
  // different names (each under the per-account limit) lock the address.
  it('locks an address after 20 failures across names', async () => {
    const agent = new Agent(server.url);
    for (let i = 0; i < 20; i++) assert.equal((await attempt(agent, `spray-${i}`, 'Password1!')).status, 401);
    assert.equal((await attempt(agent, 'rose', PASSWORD)).status, 429, 'the right password of a fresh account is locked out too');
    const c = await server.createClient({ grantTypes: ['password'], redirectUris: [] });
    const res = await post(server.url, '/oauth/token', { grant_type: 'password', username: 'rose', password: PASSWORD }, { authorization: basic(c.id, c.secret!) });
    const body = await expectOAuthError(res, 400, 'invalid_grant');
    assert.match(body.error_description ?? '', /too many/);
  });
});
