import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Bot, InputFile } from 'grammy';
import type { Browser, Page } from 'playwright-core';
import { BOT_TOKEN as TOKEN, newChatPage, say, signInToChat } from './chat-page-support.js';
import { chromiumMissing, launchChromium } from '../browser/chromium.js';
import { png } from './files-support.js';
import { startBotServer, type BotTestServer } from './support.js';

/**
 * The chat page with an unmodified grammY bot sending a photo and a
 * document: the photo is shown inline (fetched with the bearer token), the
 * document downloads with its name and bytes. Skipped without
 * /usr/bin/chromium, except in CI.
 */
describe('chat page photos and documents in Chromium', { skip: chromiumMissing(), timeout: 120_000 }, () => {
  let server: BotTestServer;
  let browser: Browser;
  let page: Page;
  let bot: Bot | undefined;
  const problems: string[] = [];

  before(async () => {
    server = await startBotServer();
    await server.createUser('iris', 'iris has a long password');
    browser = await launchChromium();
    page = await newChatPage(browser, problems, { acceptDownloads: true });
  });
  after(async () => {
    await bot?.stop();
    await browser?.close();
    await server?.close();
  });

  it('shows a photo and downloads a document', async () => {
    await signInToChat(page, server.botUrl, 'iris', 'iris has a long password');
    await say(page, '/newbot');
    await say(page, 'Pictures');
    const token = TOKEN.exec(await say(page, 'iris_pictures_bot'))?.[1];
    assert.ok(token);

    const b = new Bot(token, { client: { apiRoot: server.botUrl } });
    bot = b;
    const report = Buffer.from('name,count\nphotos,1\n');
    b.command('photo', (ctx) => ctx.replyWithPhoto(new InputFile(png(120, 80), 'chart.png'), { caption: 'Today\'s chart' }));
    b.command('doc', (ctx) => ctx.replyWithDocument(new InputFile(report, 'report.csv'), { caption: 'The numbers' }));
    await new Promise<void>((resolve) => void b.start({ onStart: () => resolve() }));

    await page.fill('#new-chat-name', '@iris_pictures_bot');
    await page.press('#new-chat-name', 'Enter');
    await page.locator('#title', { hasText: '@iris_pictures_bot' }).waitFor();

    assert.equal(await say(page, '/photo'), 'Today\'s chart');
    const img = page.locator('#messages li.theirs img.photo');
    await img.waitFor();
    // Loaded and decoded: the browser read the bytes it fetched with the bearer token.
    await page.waitForFunction("(() => { const el = document.querySelector('#messages img.photo'); return Boolean(el && el.complete && el.naturalWidth > 0); })()");
    type Img = { naturalWidth: number; naturalHeight: number };
    assert.deepEqual(await img.evaluate((el) => [(el as unknown as Img).naturalWidth, (el as unknown as Img).naturalHeight]), [120, 80]);
    assert.match((await img.getAttribute('src')) ?? '', /^blob:/);

    assert.equal(await say(page, '/doc'), 'The numbers');
    const button = page.locator('#messages li.theirs button.document');
    assert.match(await button.innerText(), /report\.csv/);
    const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
    assert.equal(download.suggestedFilename(), 'report.csv');
    assert.deepEqual(readFileSync((await download.path())!), report);

    assert.deepEqual(problems, []);
  });
});
