import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { BOT_TOKEN as TOKEN, collectProblems, say, signInToChat } from './chat-page-support.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { botApi, startBotServer, type BotTestServer } from './support.js';

const PHONE = { width: 390, height: 844 };

/** Nothing wider than the screen: no sideways scrolling, and each element given lies inside the viewport. */
async function fitsScreen(page: Page, selectors: string[]): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate('({ scrollWidth: document.scrollingElement.scrollWidth, innerWidth: window.innerWidth })') as { scrollWidth: number; innerWidth: number };
  assert.ok(scrollWidth <= innerWidth, `the page scrolls sideways: ${scrollWidth} > ${innerWidth}`);
  for (const selector of selectors) {
    const box = await page.locator(selector).boundingBox();
    assert.ok(box, `${selector} is not shown`);
    assert.ok(box.x >= 0 && box.x + box.width <= PHONE.width + 0.5, `${selector} is clipped sideways: ${JSON.stringify(box)}`);
    assert.ok(box.y >= 0 && box.y + box.height <= PHONE.height + 0.5, `${selector} is outside the screen: ${JSON.stringify(box)}`);
  }
}

/**
 * The chat page on a phone-sized screen (390×844) in Chromium: signed out it
 * is only the welcome card; signed in nothing is clipped; BotFather's empty
 * chat says to send /start; the token BotFather gives has a copy button; an
 * address in a message is a link that opens in a new tab, and markup in a
 * message stays text.
 */
describe('chat page on a phone in Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let server: BotTestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    server = await startBotServer();
    await server.createUser('pia', 'pia has a long password');
    browser = await launchChromium();
    context = await browser.newContext({ viewport: PHONE, hasTouch: true });
    context.setDefaultTimeout(15_000);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.botUrl });
    page = await context.newPage();
    collectProblems(page, problems);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signed out shows only the welcome card, within the screen', async () => {
    await page.goto(`${server.botUrl}/`);
    await page.locator('#welcome').waitFor();
    assert.equal(await page.locator('#signin').isVisible(), true);
    for (const hidden of ['#app', '#chats', '#compose', '#new-chat', '#messages', '#title', '#signout']) {
      assert.equal(await page.locator(hidden).isVisible(), false, `${hidden} is shown to a signed-out visitor`);
    }
    await fitsScreen(page, ['#welcome', '#signin', '.bar']);
    assert.deepEqual(problems, []);
  });

  it("signed in, BotFather's empty chat hints /start; nothing is clipped", async () => {
    await signInToChat(page, server.botUrl, 'pia', 'pia has a long password');
    await page.locator('#hint').waitFor();
    assert.match(await page.locator('#hint').innerText(), /\/start/);
    assert.equal(await page.locator('#welcome').isVisible(), false);
    await fitsScreen(page, ['#hint', '#compose', '#text', '#compose button[type=submit]', '#signout']);
    // The hint's /start sends it; the answer hides the hint.
    await page.click('#hint-start');
    await page.locator('#messages li.theirs').first().waitFor();
    assert.match(await page.locator('#messages li.theirs .text').first().innerText(), /\/newbot/);
    assert.equal(await page.locator('#hint').isVisible(), false);
    assert.deepEqual(problems, []);
  });

  it('a token from BotFather has a copy button that puts it on the clipboard; its link opens in a new tab', async () => {
    await say(page, '/newbot');
    await say(page, 'Phone Bot');
    const done = await say(page, 'pia_phone_bot');
    const token = TOKEN.exec(done)?.[1];
    assert.ok(token, done);
    const message = page.locator('#messages li.theirs').last();
    const copy = message.locator('button.copy');
    assert.equal(await copy.count(), 1);
    assert.equal(await copy.getAttribute('data-copy'), token);
    await copy.click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), token);
    assert.match(await copy.innerText(), /Copied/);
    // No copy button on messages without a token.
    assert.equal(await page.locator('#messages li.theirs').first().locator('button.copy').count(), 0);

    // BotFather's text names the Bot API page without an entity: a link all the same.
    const docs = message.locator('a[href="https://core.telegram.org/bots/api"]');
    assert.equal(await docs.count(), 1);
    assert.equal(await docs.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await docs.getAttribute('target'), '_blank');
    // The long token wraps inside the bubble.
    await fitsScreen(page, ['#compose', '#compose button[type=submit]']);
    const bubble = await message.boundingBox();
    assert.ok(bubble && bubble.x + bubble.width <= PHONE.width, JSON.stringify(bubble));

    // The copy still works where the Clipboard API is missing (the page over plain http on a LAN address).
    await page.evaluate(`Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true });
      document.addEventListener('copy', () => { window.copied = String(document.getSelection()); }, { once: true })`);
    await copy.click();
    assert.equal(await page.evaluate('window.copied'), token);

    // A bot's message with an address and markup-looking text: the address is a link, the rest stays text.
    await page.fill('#new-chat-name', '@pia_phone_bot');
    await page.press('#new-chat-name', 'Enter');
    await page.fill('#text', 'hello');
    await page.press('#text', 'Enter');
    await page.locator('#messages li.mine').first().waitFor();
    const updates = await botApi(server.botUrl, token, 'getUpdates');
    const chatId = (updates.body.result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
    const text = 'Read https://example.org/docs?a=1&b=2. <b>not bold</b> <img src=x onerror=alert(1)>';
    // The server finds the address (a url entity); the page builds the link from it.
    await botApi(server.botUrl, token, 'sendMessage', { chat_id: chatId, text });
    const reply = page.locator('#messages li.theirs').first();
    await reply.waitFor();
    assert.equal(await reply.locator('.text').innerText(), text);
    const a = reply.locator('a');
    assert.equal(await a.count(), 1);
    assert.equal(await a.getAttribute('href'), 'https://example.org/docs?a=1&b=2');
    assert.equal(await a.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await a.getAttribute('target'), '_blank');
    assert.equal(await reply.locator('b, img').count(), 0);
    // A bot's message is never from BotFather: no copy button even if it looks like a token.
    await botApi(server.botUrl, token, 'sendMessage', { chat_id: chatId, text: `not a secret ${token}` });
    await page.locator('#messages li.theirs').nth(1).waitFor();
    assert.equal(await page.locator('#messages li.theirs').nth(1).locator('button.copy').count(), 0);
    await fitsScreen(page, ['#compose', '#compose button[type=submit]']);

    // With entities off (a sendMessage entities list given explicitly), the page still finds the address.
    await botApi(server.botUrl, token, 'sendMessage', { chat_id: chatId, text: 'plain https://example.net/x here', entities: [{ type: 'bold', offset: 0, length: 5 }] });
    const plain = page.locator('#messages li.theirs').nth(2);
    await plain.waitFor();
    assert.equal(await plain.locator('a').getAttribute('href'), 'https://example.net/x');
    assert.equal(await plain.locator('strong').innerText(), 'plain');
    assert.deepEqual(problems, []);
  });
});
