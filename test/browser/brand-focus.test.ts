import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from './chromium.js';
import { startBotServer, type BotTestServer } from '../bot/support.js';

/** WCAG 2.2 relative luminance and contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const lum = (c: string) => {
    const [r, g, bl] = (c.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((x) => {
      const v = Number(x) / 255;
      return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

/**
 * The person-facing pages in Chromium, light and dark: each shows the gate
 * mark (inline SVG: the page fetches nothing from elsewhere), and the element
 * the keyboard reaches has a visible outline of at least 3:1 against the card
 * (WCAG 2.2, 1.4.11 and 2.4.7). Login, an error page, the account page, the
 * admin console and the chat page.
 */
describe('pages: logo and keyboard focus colour', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let server: BotTestServer;
  let browser: Browser;

  before(async () => {
    server = await startBotServer();
    const admin = await server.createUser('root', 'root has a long password');
    await server.gh.console.setAdmin(admin.id, true);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  async function check(page: Page, what: string, focusable = true): Promise<void> {
    const logo = page.locator('svg.logo').first();
    assert.equal(await logo.isVisible(), true, `${what}: no logo`);
    const box = await logo.boundingBox();
    assert.ok(box && box.width >= 16 && box.width <= 48, `${what}: logo size ${JSON.stringify(box)}`);
    if (!focusable) return;
    await page.locator('body').focus();
    await page.keyboard.press('Tab');
    const ring = await page.evaluate(`(() => {
      const el = document.activeElement;
      const s = getComputedStyle(el);
      let bgEl = el.parentElement;
      while (bgEl && getComputedStyle(bgEl).backgroundColor === 'rgba(0, 0, 0, 0)') bgEl = bgEl.parentElement;
      return { tag: el.tagName, style: s.outlineStyle, width: parseFloat(s.outlineWidth), color: s.outlineColor,
        behind: bgEl ? getComputedStyle(bgEl).backgroundColor : 'rgb(255, 255, 255)' };
    })()`) as { tag: string; style: string; width: number; color: string; behind: string };
    assert.notEqual(ring.tag, 'BODY', `${what}: Tab reached nothing`);
    assert.equal(ring.style, 'solid', `${what}: ${JSON.stringify(ring)}`);
    assert.ok(ring.width >= 2, `${what}: ${JSON.stringify(ring)}`);
    const ratio = contrast(ring.color, ring.behind);
    assert.ok(ratio >= 3, `${what}: focus outline ${ring.color} on ${ring.behind} is ${ratio.toFixed(2)}:1`);
  }

  for (const scheme of ['light', 'dark'] as const) {
    it(`${scheme}: login, error, account, console and chat pages`, async () => {
      const context = await browser.newContext({ colorScheme: scheme });
      context.setDefaultTimeout(15_000);
      const page = await context.newPage();
      const elsewhere: string[] = [];
      page.on('request', (r) => {
        const origin = new URL(r.url()).origin;
        if (origin !== server.url && origin !== server.botUrl) elsewhere.push(r.url());
      });
      await page.goto(`${server.url}/login`);
      await check(page, 'login');
      await page.goto(`${server.url}/oauth2?client_id=no-such-client&response_type=code`);
      // Nothing to press on an error page: the mark only.
      await check(page, 'error page', false);
      await page.goto(`${server.url}/login?return_to=%2Faccount`);
      await page.getByLabel('Username').fill('root');
      await page.getByLabel('Password').fill('root has a long password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${server.url}/account`);
      await check(page, 'account');
      await page.goto(`${server.url}/admin`);
      await check(page, 'console');
      await page.goto(`${server.botUrl}/`);
      await page.locator('#welcome').waitFor();
      await check(page, 'chat');
      assert.deepEqual(elsewhere, []);
      await context.close();
    });
  }
});
