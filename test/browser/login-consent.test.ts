import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { chromiumMissing, launchChromium, startCallback, type Callback } from './chromium.js';

const APP = 'Acme Photo Printing';

/**
 * A person in a real Chromium: sign in, read the consent page, choose. Without
 * /usr/bin/chromium the suite is skipped, except with CI=true, where
 * chromiumMissing() throws and the file fails.
 */
describe('login and consent pages in Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let server: TestServer;
  let callback: Callback;
  let browser: Browser;
  let user: { username: string; password: string };
  let client: { id: string; secret: string | undefined };
  /** Everything the pages print to the console: a CSP violation shows up here. */
  const consoleErrors: string[] = [];

  before(async () => {
    server = await startServer();
    callback = await startCallback();
    browser = await launchChromium();
    user = await server.createUser('alice');
  });

  /** A fresh client for each case: consent once given is remembered per user and client. */
  async function newClient() {
    client = await server.createClient({ name: APP, redirectUris: [callback.url], scope: 'user chat' });
    return client;
  }
  after(async () => {
    await browser?.close();
    await callback?.close();
    await server?.close();
  });

  async function open(options: BrowserContextOptions = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext(options);
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    return { context, page };
  }

  function authorizeUrl(state: string, clientId = client.id) {
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const q = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: callback.url, scope: 'user chat',
      state, code_challenge: challenge, code_challenge_method: 'S256',
    });
    return { url: `${server.url}/oauth2?${q}`, verifier };
  }

  /** The query the app's redirect URI received for `state`, once the browser got there. */
  async function landed(page: Page, state: string): Promise<URLSearchParams> {
    await page.waitForURL((u) => u.href.startsWith(callback.url));
    const got = callback.received.find((q) => q.get('state') === state);
    assert.ok(got, `the callback saw no request with state ${state}`);
    return got;
  }

  async function signIn(page: Page, password = user.password) {
    assert.equal(new URL(page.url()).pathname, '/login');
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function expectConsent(page: Page) {
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/oauth2');
    const heading = await page.getByRole('heading', { level: 1 }).innerText();
    assert.match(heading, new RegExp(`${APP}\\s+wants to access your account`));
    assert.match(await page.locator('.account').innerText(), /Signed in as alice/);
    const scopes = await page.getByRole('list').getByRole('listitem').allInnerTexts();
    assert.equal(scopes.length, 2);
    assert.match(scopes[0]!, /See your profile/);
    assert.match(scopes[0]!, /username, name and e-mail address/);
    assert.match(scopes[1]!, /Read and send your chat messages/);
    assert.match(await page.locator('.note').innerText(), new RegExp(`go back to ${new URL(callback.url).host.replace(/\./g, '\\.')}`));
  }

  it('signs in, allows, and the app exchanges its code (PKCE S256) for tokens', async () => {
    await newClient();
    const { page } = await open();
    const { url, verifier } = authorizeUrl('state-allow');
    await page.goto(url);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Sign in');
    assert.match(await page.locator('.lede').innerText(), new RegExp(`to continue to ${APP}`));
    // The stylesheet loaded under the CSP (a blocked sheet leaves the button unstyled).
    assert.notEqual(await page.evaluate('getComputedStyle(document.querySelector("button.primary")).backgroundColor'), 'rgba(0, 0, 0, 0)');
    await signIn(page);

    await expectConsent(page);
    await page.getByRole('button', { name: 'Allow' }).click();
    const back = await landed(page, 'state-allow');
    assert.equal(back.get('iss'), server.url);
    assert.equal(back.get('error'), null);
    const code = back.get('code');
    assert.ok(code);

    const res = await fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: callback.url, code_verifier: verifier }),
    });
    assert.equal(res.status, 200);
    const tokens = (await res.json()) as Record<string, unknown>;
    assert.equal(tokens.token_type, 'Bearer');
    assert.equal(tokens.scope, 'user chat');
    assert.equal(typeof tokens.access_token, 'string');
    assert.equal(typeof tokens.refresh_token, 'string');
  });

  it('works without JavaScript: Deny sends access_denied back to the app', async () => {
    await newClient();
    const { page } = await open({ javaScriptEnabled: false });
    await page.goto(authorizeUrl('state-deny').url);
    assert.doesNotMatch(await page.content(), /<script/i);
    await signIn(page);
    await expectConsent(page);
    assert.doesNotMatch(await page.content(), /<script/i);
    await page.getByRole('button', { name: 'Deny' }).click();
    const back = await landed(page, 'state-deny');
    assert.equal(back.get('error'), 'access_denied');
    assert.equal(back.get('iss'), server.url);
    assert.equal(back.get('code'), null);
  });

  it('a wrong password is announced as an alert and signs no one in', async () => {
    await newClient();
    const { context, page } = await open();
    const { url } = authorizeUrl('state-wrong');
    await page.goto(url);
    await page.getByLabel('Username').fill(user.username);
    await page.getByLabel('Password').fill('not the password');
    await page.getByLabel('Password').press('Enter');

    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal(await alert.innerText(), 'Incorrect username or password.');
    assert.equal(new URL(page.url()).pathname, '/login');
    // The fields point at the message, the username stays, the password is asked again.
    assert.equal(await page.getByLabel('Password').getAttribute('aria-describedby'), 'login-error');
    assert.equal(await page.getByLabel('Username').inputValue(), user.username);
    assert.equal(await page.getByLabel('Password').inputValue(), '');
    assert.equal(await page.evaluate('document.activeElement && document.activeElement.id'), 'password');
    assert.ok(!(await context.cookies()).some((c) => c.name === 'gh_session'), 'no session cookie after a failed sign-in');

    // Still signed out: the same request asks for a sign-in again, and the right password works.
    await page.goto(url);
    await signIn(page);
    await expectConsent(page);
    assert.equal(callback.received.some((q) => q.get('state') === 'state-wrong'), false);
  });

  it('a link naming no registered client shows an error page and never reaches the app', async () => {
    const { page } = await open();
    const seen = callback.received.length;
    const res = await page.goto(authorizeUrl('state-bad', 'no-such-client').url);
    assert.equal(res?.status(), 400);
    assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'This sign-in link is not valid');
    assert.match(await page.getByRole('alert').innerText(), /^Unknown client/);
    assert.equal(callback.received.length, seen);
  });

  it('fits a 320px phone screen without sideways scrolling, even with a long app name', async () => {
    const long = await server.createClient({
      name: 'Supercalifragilisticexpialidocious-Photo-Printing-And-Framing-Service-International',
      redirectUris: [callback.url],
      scope: 'user chat some-very-long-custom-permission-name-without-any-spaces',
    });
    const { page } = await open({ viewport: { width: 320, height: 640 }, colorScheme: 'dark' });
    const overflow = () => page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    const q = new URLSearchParams({ response_type: 'code', client_id: long.id, redirect_uri: callback.url, state: 'state-phone', scope: 'user some-very-long-custom-permission-name-without-any-spaces' });
    await page.goto(`${server.url}/oauth2?${q}`);
    assert.equal(await overflow(), 0, 'login page scrolls sideways');
    await signIn(page);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.equal(await overflow(), 0, 'consent page scrolls sideways');
    const box = await page.getByRole('button', { name: 'Allow' }).boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 320 && box.height >= 44, `Allow button off screen or too small: ${JSON.stringify(box)}`);
    await page.goto(`${server.url}/oauth2?response_type=code&client_id=${'x'.repeat(200)}`);
    assert.equal(await overflow(), 0, 'error page scrolls sideways');
  });

  it('printed no console errors (no CSP violations, no failed script)', () => {
    const csp = consoleErrors.filter((e) => /Content Security Policy|Refused to/i.test(e));
    assert.deepEqual(csp, []);
  });
});

