import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DEMO_USER, ensureDemoUser, registerSampleClients, useSiteUrl } from '../../examples/website/clients.js';
import { startWebsite } from '../../examples/website/site.js';
import { startServer, type TestServer } from '../helpers/server.js';

/** Debian's chromium; the tests never download a browser. In CI a missing one is a failure. */
const CHROMIUM = '/usr/bin/chromium';
function chromiumMissing(): string | false {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') throw new Error(`Chromium is required in CI: ${CHROMIUM} is missing`);
  return `${CHROMIUM} is missing (apt-get install -y chromium)`;
}

describe('sample website in a browser', { skip: chromiumMissing() }, () => {
  let server: TestServer;
  let site: Awaited<ReturnType<typeof startWebsite>>;
  let browser: Browser;
  let clients: Awaited<ReturnType<typeof registerSampleClients>>;

  before(async () => {
    server = await startServer();
    await ensureDemoUser(server.gh);
    clients = await registerSampleClients(server.gh);
    site = await startWebsite({ issuer: server.url, apiUrl: server.apiUrl, ...clients, port: 0 });
    await useSiteUrl(server.gh, clients.clientId, site.url);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  after(async () => {
    await browser?.close();
    await site?.close();
    await server?.close();
  });

  async function logIn(page: Page) {
    await page.getByLabel('Username').fill(DEMO_USER.username);
    await page.getByLabel('Password').fill(DEMO_USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  const field = (page: Page, name: string) => page.locator(`[data-field="${name}"]`);

  it('signs in, approves and shows the profile; the refresh token never reaches the browser', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Everything the site sends the browser, to check no refresh token is among it.
    const seen: string[] = [];
    const bodies: Promise<string>[] = [];
    page.on('response', (r) => {
      if (!r.url().startsWith(site.url)) return;
      seen.push(r.url());
      if (r.status() !== 303) bodies.push(r.text().catch(() => ''));
    });
    await page.goto(site.url);
    await page.getByRole('link', { name: 'Sign in with Gatehouse' }).click();
    await logIn(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    await field(page, 'email').waitFor();
    assert.equal(await field(page, 'username').textContent(), 'alice');
    assert.equal(await field(page, 'name').textContent(), 'Alice Liddell');
    assert.equal(await field(page, 'email').textContent(), 'alice@example.com');
    assert.match((await page.locator('#token-info').textContent()) ?? '', /refreshes at/);
    assert.ok(seen.some((u) => u.endsWith('/session/token')));
    for (const body of await Promise.all(bodies)) assert.doesNotMatch(body, /gh_rt_/);
    await context.close();
  });

  it('shows the refusal when consent is denied', async () => {
    const user = await server.gh.storage.users.findByUsername(DEMO_USER.username);
    await server.gh.storage.consents.revoke(user!.id, clients.clientId);
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(site.url);
    await page.getByRole('link', { name: 'Sign in with Gatehouse' }).click();
    await logIn(page);
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.getByRole('heading', { name: 'Access denied' }).waitFor();
    assert.match((await page.getByRole('alert').textContent()) ?? '', /did not allow/);
    await context.close();
  });

  it('implicit page: the script takes the token from the fragment and shows the profile', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${site.url}/implicit`);
    await page.getByRole('button', { name: 'Sign in (implicit)' }).click();
    await logIn(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.locator('#status[data-token="received"]').waitFor();
    await field(page, 'email').waitFor();
    assert.equal(await field(page, 'username').textContent(), 'alice');
    // The token left the address bar (and history) as soon as the script read it.
    assert.equal(new URL(page.url()).hash, '');
    assert.equal(new URL(page.url()).pathname, '/implicit/callback');
    await context.close();
  });
});
