import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DEVICE_GRANT_TYPE } from '../../src/core/oauth/device.js';
import { postForm, startChatServer, type ChatServer } from '../device/support.js';
import { chromiumMissing, launchChromium } from './chromium.js';

/**
 * Issue 27 item 6 in Chromium, light and dark, at 1280×800 and 390×844: the
 * device page's code field (styled, format hinted), its consent page with the
 * code repeated (RFC 8628 §5.4), the 404 pages of the auth and bot ports and
 * the home page. Screenshots go to GATEHOUSE_TEST_OUTPUT (default
 * tmp/test-output in the checkout, which git ignores) for a person to look at.
 */
const OUT = join(process.env.GATEHOUSE_TEST_OUTPUT ?? join(import.meta.dirname, '../../tmp/test-output'), 'device-pages');
const SIZES = [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]] as const;

describe('device, 404 and home pages in Chromium', { skip: chromiumMissing(), timeout: 180_000 }, () => {
  let server: ChatServer;
  let browser: Browser;
  let tv: { id: string; secret: string | undefined };
  const password = 'root has a long password';

  before(async () => {
    mkdirSync(OUT, { recursive: true });
    server = await startChatServer('sqlite');
    const root = await server.createUser('root', password);
    await server.gh.console.setAdmin(root.id, true);
    tv = await server.createClient({ name: 'Living-room TV', public: true, grantTypes: [DEVICE_GRANT_TYPE], redirectUris: [], scope: 'openid user' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Fits the width (no sideways scrolling) and writes the screenshot. */
  async function shot(page: Page, name: string): Promise<void> {
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth') as number;
    assert.ok(overflow <= 0, `${name}: ${overflow}px wider than the window`);
    await page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
  }

  for (const colorScheme of ['light', 'dark'] as const) {
    for (const [size, viewport] of SIZES) {
      it(`${colorScheme}, ${size} (${viewport.width}×${viewport.height})`, async () => {
        const context = await browser.newContext({ colorScheme, viewport });
        const page = await context.newPage();
        const errors: string[] = [];
        // A page's own 404/400 status is logged as a failed load; a refused style or script is what would matter.
        page.on('console', (m) => m.type() === 'error' && !/^Failed to load resource/.test(m.text()) && errors.push(m.text()));
        const tag = `${colorScheme}-${size}`;
        try {
          await page.goto(`${server.url}/`);
          await shot(page, `home-signed-out-${tag}`);
          await page.goto(`${server.url}/login?return_to=${encodeURIComponent('/device')}`);
          await page.getByLabel('Username').fill('root');
          await page.getByLabel('Password').fill(password);
          await page.getByRole('button', { name: 'Sign in' }).click();

          // The code field: a text field with the page's look, its format hinted.
          const field = page.getByLabel('Code');
          await field.waitFor();
          assert.equal(await field.getAttribute('type'), 'text');
          assert.equal(await field.getAttribute('autocomplete'), 'one-time-code');
          assert.equal(await field.getAttribute('placeholder'), 'XXXX-XXXX');
          const look = await page.evaluate(`(() => {
            const el = document.querySelector('#user_code');
            const s = getComputedStyle(el);
            return { radius: parseFloat(s.borderTopLeftRadius), height: el.getBoundingClientRect().height, width: el.getBoundingClientRect().width,
              font: s.fontFamily, align: s.textAlign, card: el.closest('.card').getBoundingClientRect().width };
          })()`) as { radius: number; height: number; width: number; font: string; align: string; card: number };
          assert.ok(look.radius >= 8, `rounded like the other fields: ${JSON.stringify(look)}`);
          assert.ok(look.height >= 44, `a thumb-sized field: ${JSON.stringify(look)}`);
          assert.ok(look.width >= look.card * 0.8, `as wide as the card: ${JSON.stringify(look)}`);
          assert.match(look.font, /mono/i);
          assert.equal(look.align, 'center');
          assert.match(await page.locator('#user_code_hint').textContent() ?? '', /XXXX-XXXX/);
          await shot(page, `device-code-${tag}`);

          const r = await postForm(`${server.url}/oauth/device_authorization`, { scope: 'openid user' }, tv);
          const userCode = (r.body as { user_code: string }).user_code;
          await field.fill('bbbbbbbb');
          await page.getByRole('button', { name: 'Continue' }).click();
          await page.getByRole('alert').waitFor();
          assert.equal(await page.getByLabel('Code').getAttribute('aria-invalid'), 'true');
          await shot(page, `device-code-wrong-${tag}`);
          await page.getByLabel('Code').fill(userCode.toLowerCase().replace('-', ''));
          await page.getByRole('button', { name: 'Continue' }).click();
          await page.getByRole('button', { name: 'Allow' }).waitFor();
          assert.equal(await page.locator('.device-code .code').textContent(), userCode);
          assert.ok(await page.locator('.device-code .code').isVisible());
          await shot(page, `device-consent-${tag}`);

          await page.goto(`${server.url}/`);
          assert.ok(await page.getByRole('link', { name: 'Admin console' }).isVisible());
          await shot(page, `home-admin-${tag}`);

          const notFound = await page.goto(`${server.url}/no/such/page`);
          assert.equal(notFound?.status(), 404);
          assert.ok(await page.getByRole('link', { name: 'Go to the Gatehouse home page' }).isVisible());
          assert.doesNotMatch(await page.content(), /application sent you here/i);
          await shot(page, `not-found-${tag}`);

          const botMiss = await page.goto(`${server.bot!.url}/no/such/page`);
          assert.equal(botMiss?.status(), 404);
          await page.getByRole('link', { name: 'Open the chat page' }).waitFor();
          await shot(page, `bot-not-found-${tag}`);
          assert.deepEqual(errors, [], 'nothing refused by the CSP');
        } finally {
          await context.close();
        }
      });
    }
  }
});
