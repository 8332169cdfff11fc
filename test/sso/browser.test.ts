import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { DEMO_USER, ensureDemoUser } from '../../examples/website/clients.js';
import { registerSsoSite } from '../../examples/sso/clients.js';
import { startSsoSite, type SsoSite } from '../../examples/sso/site.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** The single sign-on example (examples/sso) in Debian's Chromium: two sites, one Gatehouse. */
describe('single sign-on in a browser: two websites, one sign-in, one sign-out', { skip: chromiumMissing() }, () => {
  let server: TestServer;
  let bookshop: SsoSite;
  let travel: SsoSite;
  let browser: Browser;

  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } }); // the sites' back-channel logout URIs are on loopback
    await ensureDemoUser(server.gh);
    bookshop = await startSsoSite({ title: 'Bookshop', accent: '#7a3e9d', issuer: server.url, register: (url) => registerSsoSite(server.gh, 'Bookshop', url) });
    travel = await startSsoSite({ title: 'Travel desk', accent: '#0f766e', issuer: server.url, register: (url) => registerSsoSite(server.gh, 'Travel desk', url) });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await bookshop?.close();
    await travel?.close();
    await server?.close();
  });

  const field = (page: Page, name: string) => page.locator(`[data-field="${name}"]`);

  /** A fresh browser profile that counts the times Gatehouse's login page is shown. */
  async function freshBrowser() {
    const context = await browser.newContext();
    const page = await context.newPage();
    const loginPages: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (r.method() === 'GET' && u.origin === server.url && u.pathname === '/login') loginPages.push(r.url());
    });
    return { context, page, loginPages };
  }

  async function signInAt(page: Page, site: SsoSite, withPassword: boolean) {
    await page.goto(site.url);
    await page.getByRole('link', { name: 'Sign in with Gatehouse' }).click();
    if (withPassword) {
      await page.getByLabel('Username').fill(DEMO_USER.username);
      await page.getByLabel('Password').fill(DEMO_USER.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
    }
    await page.waitForURL(`${site.url}/`);
    assert.equal(await field(page, 'name').textContent(), DEMO_USER.name);
    return (await field(page, 'sid').textContent())!;
  }

  it('signing in on one website signs you in on the other without a password', async () => {
    const { context, page, loginPages } = await freshBrowser();
    const sidA = await signInAt(page, bookshop, true);
    assert.equal(loginPages.length, 1);
    const sidB = await signInAt(page, travel, false);
    assert.equal(loginPages.length, 1, 'no second password prompt');
    assert.equal(sidB, sidA, 'one Gatehouse session behind both');
    assert.equal(await field(page, 'email').textContent(), DEMO_USER.email);
    await context.close();
  });

  it('signing out on one website ends the session on both (back-channel logout received and verified)', async () => {
    const { context, page } = await freshBrowser();
    const sid = await signInAt(page, bookshop, true);
    await signInAt(page, travel, false);
    const before = { bookshop: bookshop.logouts.length, travel: travel.logouts.length };

    await page.getByRole('button', { name: 'Sign out everywhere' }).click();
    await page.waitForURL(`${travel.url}/signed-out`);
    assert.match((await page.locator('#notice').textContent())!, /signed out of Gatehouse/);

    // Gatehouse told both sites before sending the browser back; each verified the logout token.
    assert.deepEqual(bookshop.logouts.slice(before.bookshop).map((l) => l.sid), [sid]);
    assert.deepEqual(travel.logouts.slice(before.travel).map((l) => l.sid), [sid]);
    await page.goto(bookshop.url);
    assert.equal(await page.locator('#status').textContent(), 'You are not signed in.');
    // And Gatehouse itself asks for the password again.
    await page.goto(`${server.url}/account`);
    assert.equal(new URL(page.url()).pathname, '/login');
    await context.close();
  });

  it("the account page removes an app's access: its refresh token then fails", async () => {
    const { context, page } = await freshBrowser();
    await signInAt(page, bookshop, true);
    await page.goto(`${server.url}/account`);
    await page.getByRole('heading', { name: 'Apps with access to your account' }).waitFor();
    assert.equal(await page.locator('.items li', { hasText: 'This browser' }).count(), 1);
    await page.getByRole('button', { name: 'Remove access of Bookshop' }).click();
    await page.waitForURL(`${server.url}/account?done=app`);
    assert.match((await page.getByRole('status').textContent())!, /no longer has access/);
    assert.equal(await page.getByRole('button', { name: 'Remove access of Bookshop' }).count(), 0);

    await page.goto(bookshop.url);
    await page.getByRole('button', { name: 'Refresh profile' }).click();
    assert.match((await page.locator('#notice').textContent())!, /no longer lets this site act for you/);
    assert.equal(await page.locator('#status').textContent(), 'You are not signed in.');
    await context.close();
  });
});
