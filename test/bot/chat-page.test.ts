import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { BOT_TOKEN as TOKEN, newChatPage, say, signInToChat } from './chat-page-support.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { botApi, startBotServer, type BotTestServer } from './support.js';

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
    page = await newChatPage(browser, problems);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('signs in and creates a bot with BotFather; new messages appear without reloading', async () => {
    await signInToChat(page, server.botUrl, 'gwen', 'gwen has a long password');
    assert.equal(await page.locator('#title').innerText(), 'BotFather');

    assert.match(await say(page, '/start'), /\/newbot/);
    assert.match(await say(page, '/newbot'), /choose a name/);
    assert.match(await say(page, 'Page Bot'), /username/);
    const done = await say(page, 'gwen_page_bot');
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
