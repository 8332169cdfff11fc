import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { botApi, startBotServer, type BotTestServer } from './support.js';

const TOKEN = /(?<![0-9])(\d+:[A-Za-z0-9_-]{35})(?![A-Za-z0-9_-])/;

/**
 * A person in a real Chromium opens {bot_api_url}/, signs in through the
 * authorization server (code + PKCE), and creates a bot by talking to
 * BotFather; the token from the page works with getMe. Skipped without
 * /usr/bin/chromium, except in CI.
 */
describe('chat page in Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let server: BotTestServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    server = await startBotServer();
    await server.createUser('gwen', 'gwen has a long password');
    browser = await launchChromium();
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    page = await context.newPage();
    // CSP violations and script errors land on the console; a missing favicon is no problem.
    page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text()); });
    page.on('response', (r) => { if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`); });
    page.on('pageerror', (e) => problems.push(e.message));
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  /** Sends a line in the open chat and waits for the bot's next answer to appear. */
  async function say(text: string): Promise<string> {
    const before = await page.locator('#messages li.theirs').count();
    await page.fill('#text', text);
    await page.press('#text', 'Enter');
    await page.locator('#messages li.theirs').nth(before).waitFor();
    return page.locator('#messages li.theirs').nth(before).locator('.text').innerText();
  }

  it('signs in and creates a bot with BotFather; new messages appear without reloading', async () => {
    await page.goto(`${server.botUrl}/`);
    await page.click('#signin');
    await page.waitForURL((u) => u.pathname === '/login');
    await page.fill('#username', 'gwen');
    await page.fill('#password', 'gwen has a long password');
    await page.click('button[type=submit]');
    // Back on the chat page, signed in: no consent page for the first-party client.
    await page.waitForURL((u) => u.origin === server.botUrl && u.pathname === '/' && !u.search);
    await page.locator('#chats button[data-bot="BotFather"]').waitFor();
    assert.equal(await page.locator('#title').innerText(), 'BotFather');

    assert.match(await say('/start'), /\/newbot/);
    assert.match(await say('/newbot'), /choose a name/);
    assert.match(await say('Page Bot'), /username/);
    const done = await say('gwen_page_bot');
    const token = TOKEN.exec(done)?.[1];
    assert.ok(token, done);
    const me = await botApi(server.botUrl, token, 'getMe');
    assert.equal((me.body.result as { username: string }).username, 'gwen_page_bot');

    // A message from the new bot shows up in the open page by itself.
    await page.fill('#new-chat-name', '@gwen_page_bot');
    await page.press('#new-chat-name', 'Enter');
    await page.fill('#text', 'hello bot');
    await page.press('#text', 'Enter');
    await page.locator('#messages li.mine').first().waitFor();
    const updates = await botApi(server.botUrl, token, 'getUpdates');
    const chatId = (updates.body.result as { message: { chat: { id: number } } }[])[0]!.message.chat.id;
    await botApi(server.botUrl, token, 'sendMessage', { chat_id: chatId, text: 'pushed *without* reload', parse_mode: 'MarkdownV2' });
    const pushed = page.locator('#messages li.theirs').first();
    await pushed.waitFor();
    assert.equal(await pushed.locator('.text').innerText(), 'pushed without reload');
    assert.equal(await pushed.locator('strong').innerText(), 'without');
    assert.deepEqual(problems, []);
  });
});
