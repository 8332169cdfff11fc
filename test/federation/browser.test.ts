import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { chromiumMissing, launchChromium, startCallback, type Callback } from '../browser/chromium.js';
import { startFederated, type Federated } from './support.js';

const APP = 'Acme Notes';

/**
 * A person in Chromium signs in to an app at Gatehouse through "Sign in with
 * Elsewhere", a second Gatehouse acting as the external provider: its own
 * login and consent pages, back to ours, a first-sign-in choice, our consent
 * page, and the app gets its code. The provider runs on 127.0.0.2, so the
 * browser keeps the two servers' cookies apart.
 */
describe('third-party login in Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let f: Federated;
  let callback: Callback;
  let browser: Browser;
  let app: { id: string; secret: string | undefined };
  const consoleErrors: string[] = [];

  before(async () => {
    f = await startFederated();
    callback = await startCallback();
    browser = await launchChromium();
    app = await f.rp.createClient({ name: APP, redirectUris: [callback.url], scope: 'user' });
  });
  after(async () => {
    await browser?.close();
    await callback?.close();
    await f?.close();
  });

  async function open(): Promise<Page> {
    const context = await browser.newContext();
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    return page;
  }

  function authorizeUrl(state: string) {
    const verifier = randomBytes(32).toString('base64url');
    const q = new URLSearchParams({
      response_type: 'code', client_id: app.id, redirect_uri: callback.url, scope: 'user', state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    });
    return { url: `${f.rp.url}/oauth2?${q}`, verifier };
  }

  /** At the provider: its login page, then its consent page for us. */
  async function atProvider(page: Page, who: { username: string; password: string }) {
    await page.waitForURL((u) => u.origin === f.provider.url && u.pathname === '/login');
    await page.getByLabel('Username').fill(who.username);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.match(await page.getByRole('heading', { level: 1 }).innerText(), /Gatehouse at Example Corp\s+wants to access your account/);
    await page.getByRole('button', { name: 'Allow' }).click();
  }

  /** Back at ours: allow the app, land at its redirect URI, redeem the code, and ask /user who it is. */
  async function finishAtApp(page: Page, state: string, verifier: string): Promise<string> {
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.equal(new URL(page.url()).origin, f.rp.url);
    assert.match(await page.getByRole('heading', { level: 1 }).innerText(), new RegExp(`${APP}\\s+wants to access your account`));
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((u) => u.href.startsWith(callback.url));
    const got = callback.received.find((q) => q.get('state') === state);
    assert.ok(got?.get('code'), `the app saw no code for ${state}`);
    const tokens = await fetch(`${f.rp.url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${app.id}:${app.secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: got!.get('code')!, redirect_uri: callback.url, code_verifier: verifier }),
    });
    assert.equal(tokens.status, 200);
    const { access_token } = (await tokens.json()) as { access_token: string };
    const me = await fetch(`${f.rp.apiUrl}/user`, { headers: { authorization: `Bearer ${access_token}` } });
    return ((await me.json()) as { username: string }).username;
  }

  it('a new person signs in with the provider and gets an account here', async () => {
    const bob = await f.provider.createUser('bob');
    const page = await open();
    const { url, verifier } = authorizeUrl('state-new');
    await page.goto(url);
    assert.match(await page.locator('.lede').innerText(), new RegExp(`to continue to ${APP}`));
    await page.getByRole('link', { name: 'Sign in with Elsewhere' }).click();
    await atProvider(page, bob);

    await page.getByRole('button', { name: 'Create account' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/federation/continue');
    assert.match(await page.locator('.lede').innerText(), /You signed in with Elsewhere as bob/);
    assert.equal(await page.getByLabel('Username for your new account').inputValue(), 'bob');
    await page.getByRole('button', { name: 'Create account' }).click();

    assert.equal(await finishAtApp(page, 'state-new', verifier), 'bob');
  });

  it('someone with an account here links it by signing in to it once', async () => {
    await f.rp.createUser('alice', 'alice password here');
    const external = await f.provider.createUser('alice.w', 'alice password elsewhere');
    const page = await open();
    const { url, verifier } = authorizeUrl('state-link');
    await page.goto(url);
    await page.getByRole('link', { name: 'Sign in with Elsewhere' }).click();
    await atProvider(page, external);

    await page.getByLabel('Your username').fill('alice');
    await page.getByLabel('Your password').fill('not it');
    await page.getByRole('button', { name: 'Link account' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.innerText(), 'Incorrect username or password.');
    assert.equal(await page.getByLabel('Your password').getAttribute('aria-describedby'), 'link-error');

    await page.getByLabel('Your username').fill('alice');
    await page.getByLabel('Your password').fill('alice password here');
    await page.getByRole('button', { name: 'Link account' }).click();
    assert.equal(await finishAtApp(page, 'state-link', verifier), 'alice');
  });

  it('printed no console errors (no CSP violations)', () => {
    assert.deepEqual(consoleErrors.filter((e) => /Content Security Policy|Refused to/i.test(e)), []);
  });
});
