import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { DEMO_USER, ensureDemoUser } from '../../examples/website/clients.js';
import { registerSsoSite } from '../../examples/sso/clients.js';
import { startSsoSite, type SsoSite } from '../../examples/sso/site.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { postgresAvailable, type DbKind } from '../helpers/db.js';
import { dropRedisPrefix, freshRedisPrefix, REDIS_URL, redisAvailable } from '../helpers/redis.js';

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

/**
 * The account page in Chromium with the same person signed in from two
 * browsers (two contexts, one of them calling itself Firefox on Windows): the
 * sessions are told apart (browser, address, last use, this browser marked),
 * and "Sign out everywhere else" ends the other one, its single sign-on at a
 * website included, and keeps this one. A form without the CSRF token is refused.
 */
// SQLite; and PostgreSQL with the sessions in Redis (where the last use is written by a Lua script).
const STORES: { name: string; db: DbKind; redis: boolean; skip: string | false }[] = [
  { name: 'SQLite', db: 'sqlite', redis: false, skip: false },
  { name: 'PostgreSQL, sessions in Redis', db: 'postgres', redis: true, skip: !(await postgresAvailable()) ? 'PostgreSQL not reachable' : !(await redisAvailable()) ? 'Redis not reachable' : false },
];

for (const store of STORES) describe(`account page: sessions told apart, sign out everywhere else (${store.name})`, { skip: chromiumMissing() || store.skip, timeout: 120_000 }, () => {
  let server: TestServer;
  let bookshop: SsoSite;
  let browser: Browser;
  const prefix = freshRedisPrefix();

  before(async () => {
    server = await startServer({
      db: store.db,
      env: {
        GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true', // the site's back-channel logout URI is on loopback
        ...(store.redis ? { GATEHOUSE_REDIS_URL: REDIS_URL, GATEHOUSE_REDIS_PREFIX: prefix } : {}),
      },
    });
    await ensureDemoUser(server.gh);
    bookshop = await startSsoSite({ title: 'Bookshop', accent: '#7a3e9d', issuer: server.url, register: (url) => registerSsoSite(server.gh, 'Bookshop', url) });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await bookshop?.close();
    await server?.close();
    if (store.redis) await dropRedisPrefix(prefix);
  });

  async function context(userAgent?: string): Promise<{ context: BrowserContext; page: Page }> {
    const ctx = await browser.newContext(userAgent ? { userAgent } : {});
    ctx.setDefaultTimeout(15_000);
    return { context: ctx, page: await ctx.newPage() };
  }

  async function signIn(page: Page): Promise<void> {
    await page.goto(`${server.url}/login?return_to=%2Faccount`);
    await page.getByLabel('Username').fill(DEMO_USER.username);
    await page.getByLabel('Password').fill(DEMO_USER.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${server.url}/account`);
  }

  it('lists both sessions told apart; signing out everywhere else ends the other (and its website) and keeps this one', async () => {
    const other = await context(FIREFOX);
    // The other browser signs in at the website through Gatehouse (single sign-on).
    await other.page.goto(bookshop.url);
    await other.page.getByRole('link', { name: 'Sign in with Gatehouse' }).click();
    await other.page.getByLabel('Username').fill(DEMO_USER.username);
    await other.page.getByLabel('Password').fill(DEMO_USER.password);
    await other.page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await other.page.waitForURL(`${bookshop.url}/`);
    const otherSid = (await other.page.locator('[data-field="sid"]').textContent())!;

    const me = await context();
    await signIn(me.page);
    const sessions = me.page.locator('li.session');
    assert.equal(await sessions.count(), 2);
    const mine = me.page.locator('li.session[aria-current="true"]');
    const theirs = me.page.locator('li.session:not([aria-current])');
    // This browser first, marked; Chromium's own name; the other is Firefox on Windows, with its address and last use.
    assert.match(await sessions.first().innerText(), /This browser/);
    assert.match(await mine.locator('.item-title').innerText(), /^(Chrome|Chromium) \d+ on Linux/);
    assert.match(await mine.innerText(), /Active now/);
    assert.match(await theirs.locator('.item-title').innerText(), /^Firefox 133 on Windows$/);
    assert.equal(await theirs.locator('.ip').innerText(), '127.0.0.1');
    assert.match(await theirs.innerText(), /Last active \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    assert.match(await theirs.innerText(), /Apps signed in: Bookshop/);
    assert.equal(await mine.locator('.ip').innerText(), '127.0.0.1');

    const logoutsBefore = bookshop.logouts.length;
    await me.page.getByRole('button', { name: 'Sign out everywhere else' }).click();
    await me.page.waitForURL(`${server.url}/account?done=others`);
    assert.match((await me.page.getByRole('status').textContent())!, /Every other browser is signed out/);
    assert.equal(await me.page.locator('li.session').count(), 1);
    assert.equal(await me.page.locator('li.session[aria-current="true"]').count(), 1);
    assert.equal(await me.page.getByRole('button', { name: 'Sign out everywhere else' }).count(), 0);

    // The website heard of it (back-channel logout) before the answer.
    assert.deepEqual(bookshop.logouts.slice(logoutsBefore).map((l) => l.sid), [otherSid]);
    // The other browser's next request to Gatehouse is signed out.
    await other.page.goto(`${server.url}/account`);
    assert.equal(new URL(other.page.url()).pathname, '/login');
    await other.page.goto(bookshop.url);
    assert.equal(await other.page.locator('#status').textContent(), 'You are not signed in.');
    // This one stays signed in.
    await me.page.goto(`${server.url}/account`);
    assert.equal(new URL(me.page.url()).pathname, '/account');
    await other.context.close();
    await me.context.close();
  });

  it('refuses the form without a valid CSRF token and ends nothing', async () => {
    const other = await context(FIREFOX);
    await signIn(other.page);
    const me = await context();
    await signIn(me.page);
    // These two, and the one the test before kept.
    const listed = await me.page.locator('li.session').count();
    assert.equal(listed, 3);
    // A forged post from this browser: right cookie, wrong token.
    const forged = await me.page.request.post(`${server.url}/account/sessions/others`, {
      form: { csrf_token: 'forged' }, headers: { origin: server.url }, maxRedirects: 0,
    });
    assert.equal(forged.status(), 403);
    const missing = await me.page.request.post(`${server.url}/account/sessions/others`, { form: {}, maxRedirects: 0 });
    assert.equal(missing.status(), 403);
    await me.page.reload();
    assert.equal(await me.page.locator('li.session').count(), listed);
    await other.page.goto(`${server.url}/account`);
    assert.equal(new URL(other.page.url()).pathname, '/account');
    // Signed out, the form leads to the login page.
    const stranger = await context();
    const anonymous = await stranger.page.request.post(`${server.url}/account/sessions/others`, { form: { csrf_token: 'x' }, maxRedirects: 0 });
    assert.equal(anonymous.status(), 303);
    assert.match(anonymous.headers().location ?? '', /^\/login/);
    for (const c of [other, me, stranger]) await c.context.close();
  });
});
