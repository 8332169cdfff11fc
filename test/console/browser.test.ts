import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { createEndpoint } from '../../src/core/notify/endpoints.js';

/**
 * The admin console in a real Chromium: an administrator signs in through
 * the usual login page and uses the forms; a person without the flag is
 * refused; a form without its CSRF token is refused; a phone-sized window
 * never scrolls sideways. Skipped without /usr/bin/chromium, except with CI=true.
 */
describe('admin console in Chromium', { skip: chromiumMissing(), timeout: 180_000 }, () => {
  let server: TestServer;
  let browser: Browser;
  let admin: { id: string; username: string; password: string };
  let plain: { id: string; username: string; password: string };
  const consoleErrors: string[] = [];

  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ROLES: 'auth', GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    browser = await launchChromium();
    admin = await server.createUser('root');
    await server.gh.console.setAdmin(admin.id, true);
    plain = await server.createUser('alice');
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function signedIn(who: { username: string; password: string }, path = '/admin', options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext(options);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    await page.goto(`${server.url}${path}`);
    assert.equal(new URL(page.url()).pathname, '/login', 'the console sends a stranger to the usual login page');
    await page.getByLabel('Username').fill(who.username);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.pathname === path);
    return { context, page };
  }

  it('creates a client and shows its secret once', async () => {
    const { context, page } = await signedIn(admin, '/admin/clients');
    await page.getByLabel('Name').fill('Browser-made app');
    await page.getByLabel('Redirect URIs').fill('https://made.example.test/cb\nhttp://127.0.0.1:7000/cb');
    await page.getByLabel('Scope').fill('user');
    await page.getByRole('button', { name: 'Create client' }).click();
    const secret = await page.locator('#client-secret').innerText();
    assert.match(secret, /^client_secret: \S{20,}$/);
    const id = (await page.locator('#client-id').innerText()).replace('client_id: ', '');
    const stored = await server.gh.storage.clients.get(id);
    assert.equal(stored?.name, 'Browser-made app');
    assert.deepEqual(stored?.redirectUris, ['https://made.example.test/cb', 'http://127.0.0.1:7000/cb']);
    assert.equal(await page.getByRole('link', { name: 'Browser-made app' }).count(), 2, 'in the notice and in the list');
    await context.close();
  });

  it('rotates the signing keys from the keyboard alone', async () => {
    const { context, page } = await signedIn(admin, '/admin/keys');
    const before = ((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: unknown[] }).keys.length;
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = (await page.evaluate('document.activeElement?.textContent ?? ""')) === 'Rotate signing keys';
    }
    assert.ok(reached, 'Tab reaches the button');
    await page.keyboard.press('Enter');
    await page.getByText(/Rotated:/).waitFor();
    const after = ((await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: unknown[] }).keys.length;
    assert.equal(after, before + 2);
    await context.close();
  });

  it('replays a failed delivery', async () => {
    const events = server.gh.storage.events;
    const endpoint = await createEndpoint(events, server.gh.clock, { url: 'http://127.0.0.1:9/in', events: ['client.created'] }, { checkUrl: server.gh.outbound.registered.check });
    await server.createClient({ name: 'Event source' });
    const [delivery] = await events.deliveries.list(endpoint.id, { limit: 1 });
    await events.deliveries.failPending(endpoint.id, 'test: failed', server.gh.clock.now());
    assert.equal((await events.deliveries.list(endpoint.id, { limit: 1 }))[0]!.status, 'failed');

    const { context, page } = await signedIn(admin, '/admin/webhooks');
    await page.getByRole('link', { name: 'http://127.0.0.1:9/in' }).click();
    await page.getByRole('link', { name: 'Dead letters' }).click();
    assert.ok((await page.locator('#deliveries').innerText()).includes(delivery!.eventId));
    await page.getByRole('button', { name: `Send message ${delivery!.eventId} again` }).click();
    await page.getByText(/will be sent again/).waitFor();
    assert.equal((await events.deliveries.list(endpoint.id, { limit: 1 }))[0]!.status, 'pending');
    await context.close();
  });

  it('a person without --admin gets 403', async () => {
    const { context, page } = await signedIn(plain, '/account');
    const res = await page.goto(`${server.url}/admin`);
    assert.equal(res?.status(), 403);
    assert.match(await page.getByRole('alert').innerText(), /not one/);
    assert.equal(await page.getByRole('navigation').count(), 1, 'no console sections shown beyond the header');
    await context.close();
  });

  it('refuses a form sent without its CSRF token', async () => {
    const { context, page } = await signedIn(admin, '/admin/keys');
    const before = (await server.gh.storage.keys.list()).length;
    await page.locator('form[action="/admin/keys/rotate"] input[name=csrf_token]').evaluate((el) => el.remove());
    const answer = page.waitForResponse((r) => r.url().endsWith('/admin/keys/rotate'));
    await page.getByRole('button', { name: 'Rotate signing keys' }).click();
    assert.equal((await answer).status(), 403);
    await page.getByRole('heading', { name: 'Request expired' }).waitFor();
    assert.equal((await server.gh.storage.keys.list()).length, before, 'nothing rotated');
    await context.close();
  });

  it('fits a 390×844 phone without scrolling sideways, on every page', async () => {
    const client = await server.createClient({ name: 'A client with a rather long name to wrap on a phone', redirectUris: ['https://a-very-long-host-name-for-testing.example.test/some/long/callback/path'] });
    const { context, page } = await signedIn(admin, '/admin', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    const [endpoint] = await server.gh.storage.events.endpoints.list();
    for (const path of ['/admin', '/admin/clients', `/admin/clients/${client.id}`, '/admin/users', '/admin/keys', '/admin/bots', '/admin/webhooks', `/admin/webhooks/${endpoint!.id}`, '/admin/mail',
      // The README walkthrough's landing page: its long command scrolls inside its own box.
      `/demo/callback?code=${'c'.repeat(43)}&state=xyz&iss=${encodeURIComponent(server.url)}`]) {
      await page.goto(`${server.url}${path}`);
      const { scroll, width } = (await page.evaluate('({ scroll: document.documentElement.scrollWidth, width: document.documentElement.clientWidth })')) as { scroll: number; width: number };
      assert.ok(scroll <= width, `${path}: ${scroll}px wide in a ${width}px window`);
      // The stylesheets loaded under the CSP.
      assert.notEqual(await page.evaluate('getComputedStyle(document.querySelector(".card")).borderRadius'), '0px', path);
    }
    await context.close();
    // The refusals above (403) and the browser's own favicon request (404) are logged as failed loads; nothing else may be.
    assert.deepEqual(consoleErrors.filter((e) => !e.startsWith('Failed to load resource')), [], 'no CSP violations or script errors');
  });
});
