import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';

/** A platform authenticator with resident keys and user verification, as a phone or laptop has (CDP WebAuthn domain). */
async function authenticator(cdp: CDPSession): Promise<string> {
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return authenticatorId;
}

for (const { kind, skip } of await databaseKinds()) {
  describe(`passkeys in Chromium (${kind})`, { skip: skip || chromiumMissing(), timeout: 120_000 }, () => {
    let server: TestServer;
    let browser: Browser;
    let context: BrowserContext;
    let page: Page;
    let cdp: CDPSession;
    const errors: string[] = [];

    before(async () => {
      // WebAuthn needs a host name: the relying party id is the host of GATEHOUSE_AUTH_URL.
      server = await startServer({ db: kind, env: { GATEHOUSE_AUTH_URL: 'http://localhost:0' } });
      await server.createUser('alice');
      browser = await launchChromium();
      context = await browser.newContext();
      page = await context.newPage();
      // A CSP violation or a script error shows up here (a refused form's own 401 page does not count).
      page.on('console', (m) => m.type() === 'error' && !/Failed to load resource/.test(m.text()) && errors.push(m.text()));
      page.on('pageerror', (e) => errors.push(e.message));
      cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
    });
    after(async () => {
      await browser?.close();
      await server?.close();
    });

    async function addPasskey(name: string) {
      await page.goto(`${server.url}/account/security`);
      await page.fill('#passkey-name', name);
      await page.click('#add-passkey button[type=submit]');
      await page.waitForFunction(() => {
        // The page's globals, typed here (the tests compile without the DOM library).
        const g = globalThis as unknown as { location: { search: string }; document: { getElementById(id: string): { textContent: string | null } | null } };
        return g.location.search.includes('done=passkey') || Boolean(g.document.getElementById('passkey-status')?.textContent);
      });
      assert.match(page.url(), /done=passkey$/, await page.textContent('#passkey-status').catch(() => '') ?? '');
      assert.match(await page.textContent('#passkeys + p + ul') ?? '', new RegExp(name));
    }

    it('registers several named passkeys, signs in with one without a password, removes one with the password', async () => {
      assert.match(server.url, /^http:\/\/localhost:\d+$/);
      await page.goto(`${server.url}/login`);
      await page.fill('#username', 'alice');
      await page.fill('#password', 'correct horse battery staple');
      await page.click('button.primary');
      await page.waitForURL(`${server.url}/`);

      const first = await authenticator(cdp);
      await addPasskey('Laptop');
      // A second device: another authenticator.
      await cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: first });
      await authenticator(cdp);
      await addPasskey('Phone');
      const names = await page.$$eval('.passkey-name', (els) => els.map((e) => e.textContent));
      assert.deepEqual(names, ['Laptop', 'Phone']);

      // Signed out, the login page offers the passkey: no username, no password.
      await context.clearCookies();
      await page.goto(`${server.url}/login`);
      await page.click('.passkey-link a');
      await page.click('#passkey-signin button');
      await page.waitForURL(`${server.url}/`);
      assert.ok((await context.cookies()).some((c) => c.name === 'gh_session'));

      // The password now leads to the second step, where the passkey is offered too.
      await context.clearCookies();
      await page.goto(`${server.url}/login`);
      await page.fill('#username', 'alice');
      await page.fill('#password', 'correct horse battery staple');
      await page.click('button.primary');
      await page.waitForURL(/\/login\/second-step$/);
      assert.ok(!(await context.cookies()).some((c) => c.name === 'gh_session'), 'no session before the second step');
      await page.click('.passkey-link a');
      await page.click('#passkey-signin button');
      await page.waitForURL(`${server.url}/`);
      assert.ok((await context.cookies()).some((c) => c.name === 'gh_session'));

      // Removing asks for the password.
      await page.goto(`${server.url}/account/security`);
      const laptop = page.locator('li.item', { hasText: 'Laptop' });
      await laptop.locator('input[name=password]').fill('not my password');
      const refused = await Promise.all([page.waitForNavigation(), laptop.locator('button').click()]).then(([r]) => r);
      assert.equal(refused?.status(), 401);
      await page.goto(`${server.url}/account/security`);
      await page.locator('li.item', { hasText: 'Laptop' }).locator('input[name=password]').fill('correct horse battery staple');
      await page.locator('li.item', { hasText: 'Laptop' }).locator('button').click();
      await page.waitForURL(/done=passkey-removed$/);
      assert.deepEqual(await page.$$eval('.passkey-name', (els) => els.map((e) => e.textContent)), ['Phone']);
      assert.deepEqual(errors, [], 'no CSP violation or script error');
    });

    it('answers bad passkey input with a clear error, never a 500', async () => {
      const json = (path: string, body: unknown, agent = new Agent(server.url)) =>
        agent.request(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal((await json('/login/passkey', { response: { id: 'x' } })).status, 400, 'no challenge');
      assert.equal((await json('/login/passkey', {})).status, 400);
      assert.equal((await json('/login/passkey', { response: 'x' })).status, 400);
      const a = new Agent(server.url);
      assert.equal((await json('/login/passkey/options', {}, a)).status, 200);
      assert.equal((await json('/login/passkey', { response: { id: 'A'.repeat(2000), type: 'public-key', response: {} } }, a)).status, 400);
      assert.equal((await json('/login/passkey/options', {}, a)).status, 200);
      assert.equal((await json('/login/passkey', { response: { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: '!!', authenticatorData: '', signature: '' } } }, a)).status, 400);
      assert.equal((await a.post('/login/passkey', { response: 'x' })).status, 400, 'a form: needs script');
      assert.equal((await a.post('/login/passkey/options', {})).status, 400);
      assert.equal((await json('/account/security/passkeys/options', { csrf_token: 'x' })).status, 401, 'signed out');
      const bob = new Agent(server.url);
      await server.createUser('bob');
      await bob.login('bob', 'correct horse battery staple');
      assert.equal((await json('/account/security/passkeys/options', { csrf_token: 'forged' }, bob)).status, 403);
      const html = await (await bob.get('/account/security')).text();
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
      assert.equal((await json('/account/security/passkeys', { csrf_token: csrf, name: 'x'.repeat(65), response: {} }, bob)).status, 400);
      assert.equal((await json('/account/security/passkeys', { csrf_token: csrf, name: 'ok', response: null }, bob)).status, 400);
      assert.equal((await json('/account/security/passkeys', { csrf_token: csrf, name: 'ok', response: { id: 'x' } }, bob)).status, 400, 'no challenge');
      assert.equal((await json('/account/security/passkeys/options', { csrf_token: csrf }, bob)).status, 200);
      assert.equal((await json('/account/security/passkeys', { csrf_token: csrf, name: 'ok', response: { id: 'x', response: {} } }, bob)).status, 400, 'not a credential');
      assert.equal((await bob.post('/account/security/passkeys/remove', { csrf_token: csrf, id: 'nope', password: 'correct horse battery staple' })).status, 404);
      assert.equal((await bob.post('/account/security/passkeys/remove', { csrf_token: csrf, id: 'nope' })).status, 400);
      assert.equal((await bob.post('/account/security/passkeys/remove', { csrf_token: csrf, password: 'x' })).status, 400);
    });
  });
}
